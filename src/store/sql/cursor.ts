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

/** A position in a list ordered by time, then `seq`: the last item's, base64url-encoded. */
export interface TimePosition {
  readonly createdAt: number;
  readonly seq: number;
}

export function encodeTimeCursor(position: TimePosition): string {
  return Buffer.from(`t${position.createdAt}.${position.seq}`).toString("base64url");
}

export function decodeTimeCursor(cursor: string): TimePosition {
  const match = /^t(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (match?.[1] === undefined || match[2] === undefined) {
    throw new AppError("invalid_cursor", undefined, { param: "cursor" });
  }
  return { createdAt: Number(match[1]), seq: Number(match[2]) };
}

/** A position in a list ordered by time, then a text id (a table without `seq`). */
export interface IdPosition {
  readonly createdAt: number;
  readonly id: string;
}

export function encodeIdCursor(position: IdPosition): string {
  return Buffer.from(`i${position.createdAt}.${position.id}`).toString("base64url");
}

export function decodeIdCursor(cursor: string): IdPosition {
  const match = /^i(\d{1,15})\.([A-Za-z0-9_-]{1,100})$/.exec(
    Buffer.from(cursor, "base64url").toString("utf8"),
  );
  if (match?.[1] === undefined || match[2] === undefined) {
    throw new AppError("invalid_cursor", undefined, { param: "cursor" });
  }
  return { createdAt: Number(match[1]), id: match[2] };
}

/**
 * A page of a list ordered by time, then id, read with one row more than `limit`: that row
 * only tells whether a page follows, whose cursor is the last kept item's position.
 */
export function idPageOf<R, T extends { readonly createdAt: Date; readonly id: string }>(
  rows: readonly R[],
  limit: number,
  toItem: (row: R) => T,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit).map(toItem);
  const last = items.at(-1);
  return {
    items,
    nextCursor:
      rows.length > limit && last !== undefined
        ? encodeIdCursor({ createdAt: last.createdAt.getTime(), id: last.id })
        : null,
  };
}
