import type { SecretBox } from "../crypto/secret-box.ts";
import type { Clock, Resolver, Store } from "../interfaces.ts";
import type { AddressPolicy } from "../net/address-policy.ts";

/** What the API's routes are given by the composition root. */
export interface ApiDependencies {
  readonly store: Store;
  readonly secretBox: SecretBox;
  readonly resolver: Resolver;
  readonly addressPolicy: AddressPolicy;
  readonly clock: Clock;
  /** How long a session lasts from sign-in (`sessionTtl`). */
  readonly sessionTtlMs: number;
}
