import type { IdempotencyClaim, StoredResponse } from "../interfaces.ts";
import { retryWhileUnavailable } from "./retry-unavailable.ts";
import {
  acquireIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from "./sql/idempotency.ts";
import { SqlSlice } from "./sql-slice.ts";

/** Idempotency keys and the responses kept for replay (decision 11). */
export interface IdempotencyStore {
  /**
   * Takes `key` for a request with `fingerprint`: locked for `lockMs`, kept for `ttlMs`. A key
   * whose lock expired (its request died) is taken over; an expired key is a new key.
   */
  acquireIdempotencyKey(
    workspaceId: string,
    key: string,
    fingerprint: string,
    options: { lockMs: number; ttlMs: number },
  ): Promise<IdempotencyClaim>;

  /** Keeps the response of the request that holds the key, for replay. */
  completeIdempotencyKey(workspaceId: string, key: string, response: StoredResponse): Promise<void>;

  /** Frees a key whose request produced no response worth replaying (a 5xx). */
  releaseIdempotencyKey(workspaceId: string, key: string): Promise<void>;
}

/** The IdempotencyStore over any `Database`: the SQL is in `./sql/`. */
export class SqlIdempotencyStore extends SqlSlice implements IdempotencyStore {
  acquireIdempotencyKey(
    workspaceId: string,
    key: string,
    fingerprint: string,
    options: { lockMs: number; ttlMs: number },
  ): Promise<IdempotencyClaim> {
    return acquireIdempotencyKey(this.db, workspaceId, key, fingerprint, {
      ...options,
      now: this.now(),
    });
  }

  completeIdempotencyKey(
    workspaceId: string,
    key: string,
    response: StoredResponse,
  ): Promise<void> {
    // Both may run twice (each changes only a key still in progress): see retryWhileUnavailable.
    return retryWhileUnavailable(() => completeIdempotencyKey(this.db, workspaceId, key, response));
  }

  releaseIdempotencyKey(workspaceId: string, key: string): Promise<void> {
    return retryWhileUnavailable(() => releaseIdempotencyKey(this.db, workspaceId, key));
  }
}
