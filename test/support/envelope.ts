import assert from "node:assert/strict";
import { errorCatalog, isErrorCode } from "../../src/errors.ts";

/** What the tests need of an HTTP answer: `inject()`'s response and a socket's parse alike. */
export interface Answer {
  readonly statusCode: number;
  readonly body: string;
}

/**
 * Asserts the contract's error envelope, `{"error":{"code","message","param"?}}`, with a
 * catalog code answered at the catalog's status; with `code`, that one. Returns the error.
 */
export function assertEnvelope(
  answer: Answer,
  code?: string,
  what = "",
): { code: string; message: string; param?: string } {
  let body: { error?: { code?: unknown; message?: unknown; param?: unknown } };
  try {
    body = JSON.parse(answer.body) as typeof body;
  } catch {
    assert.fail(`${what}: not JSON: ${answer.body.slice(0, 200)}`);
  }
  const error = body.error;
  assert.ok(isErrorCode(error?.code), `${what}: a catalog code, not ${answer.body.slice(0, 200)}`);
  if (code !== undefined) assert.equal(error.code, code, `${what}: ${answer.body.slice(0, 200)}`);
  assert.equal(answer.statusCode, errorCatalog[error.code].status, `${what}: the catalog's status`);
  assert.equal(typeof error.message, "string", what);
  assert.ok(error.param === undefined || typeof error.param === "string", what);
  return error as { code: string; message: string; param?: string };
}
