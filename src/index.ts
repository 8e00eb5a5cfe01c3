/** The package's library entry: what receivers and embedders import. */
export { AppError, errorCatalog, ExitStatus, type ErrorCode } from "./errors.ts";
export * from "./interfaces.ts";
export { computeSignature, signatureHeader } from "./receiver/signature.ts";
export {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  verifySignature,
  type VerifiedSignature,
  type VerifySignatureOptions,
} from "./receiver/verify-signature.ts";
export * from "./receiver/verification-errors.ts";
