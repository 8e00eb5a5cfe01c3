/** The package's library entry: what receivers and embedders import. */
export { AppError, errorCatalog, ExitStatus, type ErrorCode } from "./errors.ts";
export * from "./interfaces.ts";
