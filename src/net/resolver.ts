import { lookup } from "node:dns/promises";
import type { Resolver } from "../interfaces.ts";

/** The operating system's resolver (getaddrinfo), every address of both families. */
export const systemResolver: Resolver = {
  async resolve(hostname) {
    const answers = await lookup(hostname, { all: true, order: "verbatim" });
    return answers.map((answer) => answer.address);
  },
};

/**
 * Names answered from a fixed table, like entries in /etc/hosts; other names go to
 * `fallback`. Names compare case-insensitively and without a trailing dot.
 */
export function tableResolver(
  table: ReadonlyMap<string, readonly string[]>,
  fallback: Resolver,
): Resolver {
  const normalised = new Map(
    [...table].map(([name, addresses]) => [normaliseName(name), addresses]),
  );
  return {
    resolve(hostname) {
      const addresses = normalised.get(normaliseName(hostname));
      return addresses === undefined ? fallback.resolve(hostname) : Promise.resolve([...addresses]);
    },
  };
}

function normaliseName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/**
 * Bounds every lookup: getaddrinfo cannot be cancelled and may hang for as long as the
 * system's resolver retries. A slow name fails as unresolvable instead of holding a request
 * (and its idempotency lock) or a delivery (and its lease) indefinitely.
 */
export function withTimeout(resolver: Resolver, timeoutMs: number): Resolver {
  return {
    resolve(hostname) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`resolving ${hostname} took longer than ${timeoutMs} ms`));
        }, timeoutMs);
      });
      return Promise.race([resolver.resolve(hostname), timeout]).finally(() => {
        clearTimeout(timer);
      });
    },
  };
}
