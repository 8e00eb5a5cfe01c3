import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The most verdicts an `AddressPolicy` keeps; it forgets them all when it has this many. */
const maxVerdicts = 4096;

export type AddressVerdict =
  { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

/**
 * Decides whether the service may connect to an address: only public unicast addresses, or
 * addresses inside the operator's allowlist (SVC_ALLOW_PRIVATE_NETWORKS, for development and
 * tests). The same policy is applied when a destination is created or updated and again before
 * every delivery attempt.
 *
 * Ranges come from ipaddr.js, whose `range()` names every special-purpose block (loopback,
 * private, link-local, unique-local, CGNAT, multicast, unspecified, reserved and documentation,
 * benchmarking…); only `unicast`, the rest of the address space, is public.
 */
export class AddressPolicy {
  readonly #allowlist: readonly [Address, number][];
  /** Verdicts given so far: the same few addresses are checked before every attempt. */
  readonly #verdicts = new Map<string, AddressVerdict>();

  /** `allowlist`: CIDR ranges such as `127.0.0.0/8` and `::1/128`; throws on a malformed one. */
  constructor(allowlist: readonly string[] = []) {
    this.#allowlist = allowlist.map((cidr) => ipaddr.parseCIDR(cidr));
  }

  static isValidCidr(cidr: string): boolean {
    try {
      ipaddr.parseCIDR(cidr);
      return true;
    } catch {
      return false;
    }
  }

  /** `address` in textual form: IPv4 dotted quad or IPv6, with or without brackets. */
  check(address: string): AddressVerdict {
    let verdict = this.#verdicts.get(address);
    if (verdict === undefined) {
      verdict = this.#decide(address);
      if (this.#verdicts.size >= maxVerdicts) this.#verdicts.clear();
      this.#verdicts.set(address, verdict);
    }
    return verdict;
  }

  #decide(address: string): AddressVerdict {
    const parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ""));
    const embedded = embeddedIPv4(parsed);
    if (this.#isAllowlisted(parsed) || (embedded !== null && this.#isAllowlisted(embedded))) {
      return { allowed: true };
    }
    // For the forms that only carry an IPv4 address, that address is what is reached.
    const reached = embedded ?? parsed;
    const range = reached.range();
    if (range === "unicast") return { allowed: true };
    return {
      allowed: false,
      reason: `${reached.toString()} is in a ${range} range, not the public internet`,
    };
  }

  #isAllowlisted(address: Address): boolean {
    return this.#allowlist.some(
      ([network, bits]) => network.kind() === address.kind() && address.match(network, bits),
    );
  }
}

/** Whether `host` (a URL hostname, IPv6 in brackets) is an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ""));
}

/**
 * IPv6 forms whose last 32 bits are an IPv4 address that is what is really reached:
 * IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96) and the well-known NAT64
 * prefix (64:ff9b::/96). Other special IPv6 blocks (6to4, Teredo, local-use NAT64) are simply
 * not public.
 */
function embeddedIPv4(address: Address): ipaddr.IPv4 | null {
  if (address.kind() !== "ipv6") return null;
  const ipv6 = address as ipaddr.IPv6;
  const range = ipv6.range();
  const wellKnownNat64 = ipv6.match(ipaddr.IPv6.parse("64:ff9b::"), 96);
  if (range !== "ipv4Mapped" && range !== "rfc6145" && !wellKnownNat64) return null;
  return new ipaddr.IPv4(ipv6.toByteArray().slice(12));
}
