import type { SecretBox } from "../crypto/secret-box.ts";
import type { Clock, Store } from "../interfaces.ts";
import type { UrlCheckDependencies } from "../net/destination-url.ts";

/** What the API's routes are given by the composition root. */
export interface ApiDependencies extends UrlCheckDependencies {
  readonly store: Store;
  readonly secretBox: SecretBox;
  readonly clock: Clock;
  /** How long a session lasts from sign-in (`sessionTtl`). */
  readonly sessionTtlMs: number;
}
