import { AppError } from "../../errors.ts";

/** Cursors are opaque to clients: the position, base64url-encoded. */
export function encodeCursor(position: number): string {
  return Buffer.from(`p${position}`).toString("base64url");
}

export function decodeCursor(cursor: string): number {
  const match = /^p(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (match?.[1] === undefined)
    throw new AppError("invalid_cursor", undefined, { param: "cursor" });
  return Number(match[1]);
}
