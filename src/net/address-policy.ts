import ipaddr from "ipaddr.js";
import {
  globalUnicastIPv6,
  ipv4Blocks,
  ipv6Blocks,
  type SpecialPurposeBlock,
} from "./special-purpose-blocks.ts";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The most verdicts an `AddressPolicy` keeps; it forgets them all when it has this many. */
const maxVerdicts = 4096;

export type AddressVerdict =
  | {
      readonly allowed: true;
      /** Allowed by the operator's allowlist rather than for being public. */
      readonly allowlisted: boolean;
    }
  | {
      readonly allowed: false;
      /** What the address is, to follow "it": "is in the loopback block 127.0.0.0/8 (RFC 1122)". */
      readonly reason: string;
    };

/**
 * Decides whether the service may connect to an address: only public addresses, or addresses
 * inside the operator's allowlist (SVC_ALLOW_PRIVATE_NETWORKS, for development and tests). The
 * same policy is applied when a destination is created or updated and again before every
 * delivery attempt.
 *
 * Public means outside every block of `special-purpose-blocks.ts` and, for IPv6, inside
 * 2000::/3. ipaddr.js only parses and matches: its `range()` calls everything it has no name
 * for "unicast", [::7f00:1] and [4000::1] included, so it must not decide.
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
    const block = narrowestBlock(parsed);
    // For the forms that only carry an IPv4 address, that address is what is reached.
    const embedded = block?.destination === "embedded IPv4" ? embeddedIPv4(parsed) : null;
    if (this.#isAllowlisted(parsed) || (embedded !== null && this.#isAllowlisted(embedded))) {
      return { allowed: true, allowlisted: true };
    }
    const reason = embedded === null ? whyNotPublic(parsed, block) : whyEmbeddedNotPublic(embedded);
    return reason === null ? { allowed: true, allowlisted: false } : { allowed: false, reason };
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

interface ParsedBlock {
  readonly block: SpecialPurposeBlock;
  readonly network: Address;
  readonly bits: number;
}

/** Narrowest first, so that an address is named by the most specific block holding it. */
function parseBlocks(blocks: readonly SpecialPurposeBlock[]): readonly ParsedBlock[] {
  return blocks
    .map((block) => {
      const [network, bits] = ipaddr.parseCIDR(block.cidr);
      return { block, network, bits };
    })
    .sort((a, b) => b.bits - a.bits);
}

const parsedIPv4Blocks = parseBlocks(ipv4Blocks);
const parsedIPv6Blocks = parseBlocks(ipv6Blocks);
const [globalUnicastNetwork, globalUnicastBits] = ipaddr.parseCIDR(globalUnicastIPv6);

function narrowestBlock(address: Address): SpecialPurposeBlock | undefined {
  const blocks = address.kind() === "ipv4" ? parsedIPv4Blocks : parsedIPv6Blocks;
  return blocks.find(({ network, bits }) => address.match(network, bits))?.block;
}

/** Why `address` is not a public destination, or null when it is one. */
function whyNotPublic(address: Address, block: SpecialPurposeBlock | undefined): string | null {
  if (block !== undefined) return `is in the ${block.name} block ${block.cidr} (${block.rfc})`;
  if (address.kind() === "ipv6" && !address.match(globalUnicastNetwork, globalUnicastBits)) {
    return `is outside ${globalUnicastIPv6}, the global unicast block (RFC 4291)`;
  }
  return null;
}

function whyEmbeddedNotPublic(embedded: ipaddr.IPv4): string | null {
  const why = whyNotPublic(embedded, narrowestBlock(embedded));
  return why === null ? null : `carries the IPv4 address ${embedded.toString()}, which ${why}`;
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedIPv4(address: Address): ipaddr.IPv4 {
  return new ipaddr.IPv4(address.toByteArray().slice(-4));
}
