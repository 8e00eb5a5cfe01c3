import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cliRetryPolicy } from "../../src/cli/client/http.ts";
import { clientRetryPolicy as clientPolicy } from "../../src/client/core.ts";
import { SvcApiError } from "../../src/client/errors.ts";
import { retryDelay } from "../../src/client/transport.ts";
import { sqlitePassOnly } from "../support/backend.ts";

const answered = (
  status: number,
  code: "rate_limited" | "idempotency_in_progress",
  after?: number,
) => new SvcApiError(code, "…", status, after === undefined ? {} : { retryAfterSeconds: after });
const lost = () =>
  new SvcApiError("api_unreachable", "…", 0, {
    cause: new TypeError("fetch failed", {
      cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }),
    }),
  });
const refused = () =>
  new SvcApiError("api_unreachable", "…", 0, {
    cause: new TypeError("fetch failed", {
      cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }),
    }),
  });

/**
 * One retry rule (src/client/transport.ts's retryDelay), two policies (decision 46): a backend
 * waits out 429/503; a command reports them at once. In process: no server is involved.
 */
describe("retries: one rule, the client's policy and the CLI's", { skip: sqlitePassOnly }, () => {
  it("the client waits a 429's or 503's Retry-After, up to its limit, and then gives up", () => {
    assert.equal(retryDelay(clientPolicy, answered(429, "rate_limited", 2), 1), 2000);
    assert.equal(retryDelay(clientPolicy, answered(503, "rate_limited"), 2), 1000);
    assert.equal(retryDelay(clientPolicy, answered(429, "rate_limited", 31), 1), null);
    assert.equal(retryDelay(clientPolicy, answered(429, "rate_limited", 1), 3), null);
  });

  it("the CLI reports a 429 or 503 at once", () => {
    assert.equal(retryDelay(cliRetryPolicy, answered(429, "rate_limited", 1), 1), null);
    assert.equal(retryDelay(cliRetryPolicy, answered(503, "rate_limited", 1), 1), null);
  });

  it("both wait out a key still in progress, and retry an answer lost after sending", () => {
    for (const policy of [clientPolicy, cliRetryPolicy]) {
      assert.equal(retryDelay(policy, answered(409, "idempotency_in_progress", 1), 1), 1000);
      assert.equal(retryDelay(policy, lost(), 1), policy.backoffMs[0]);
    }
  });

  it("neither retries a refused connection: nothing was sent", () => {
    assert.equal(retryDelay(clientPolicy, refused(), 1), null);
    assert.equal(retryDelay(cliRetryPolicy, refused(), 1), null);
  });
});
