import ipaddr from "ipaddr.js";
import {
  ipv4Blocks,
  ipv6Blocks,
  type SpecialPurposeBlock,
} from "../../src/net/special-purpose-blocks.ts";

/**
 * Address arithmetic for tests, on integers: which block holds an address is computed here
 * from the CIDR text, independently of the policy's own matching.
 */
export interface AddressRange {
  readonly family: 4 | 6;
  readonly prefix: number;
  readonly first: bigint;
  readonly last: bigint;
}

export function blockRange(cidr: string): AddressRange {
  const [network = "", prefixText = ""] = cidr.split("/");
  const { family, value } = addressValue(network);
  const width = family === 4 ? 32 : 128;
  const prefix = Number(prefixText);
  const hostBits = BigInt(width - prefix);
  const first = (value >> hostBits) << hostBits;
  return { family, prefix, first, last: first + (1n << hostBits) - 1n };
}

export function addressValue(address: string): { family: 4 | 6; value: bigint } {
  const parsed = ipaddr.parse(address);
  const value = parsed.toByteArray().reduce((sum, byte) => (sum << 8n) | BigInt(byte), 0n);
  return { family: parsed.kind() === "ipv4" ? 4 : 6, value };
}

/** The address as ipaddr.js writes it: dotted quad, or RFC 5952's compressed IPv6. */
export function formatAddress(value: bigint, family: 4 | 6): string {
  const bytes: number[] = [];
  for (let index = family === 4 ? 3 : 15; index >= 0; index -= 1) {
    bytes.push(Number((value >> BigInt(index * 8)) & 0xffn));
  }
  return ipaddr.fromByteArray(bytes).toString();
}

export function contains(range: AddressRange, family: 4 | 6, value: bigint): boolean {
  return range.family === family && value >= range.first && value <= range.last;
}

/** The narrowest block of the table holding the address, as the registries name it. */
export function narrowestBlock(family: 4 | 6, value: bigint): SpecialPurposeBlock | undefined {
  const holding = [...ipv4Blocks, ...ipv6Blocks]
    .map((block) => ({ block, range: blockRange(block.cidr) }))
    .filter(({ range }) => contains(range, family, value))
    .sort((a, b) => b.range.prefix - a.range.prefix);
  return holding[0]?.block;
}

/** An address of `block` that no narrower block of the table holds. */
export function addressOnlyIn(block: SpecialPurposeBlock): string {
  const range = blockRange(block.cidr);
  const middle = range.first + (range.last - range.first) / 2n;
  for (const candidate of [range.first, range.last, middle, range.first + 1n]) {
    if (narrowestBlock(range.family, candidate) === block) {
      return formatAddress(candidate, range.family);
    }
  }
  throw new Error(`every tried address of ${block.cidr} is in a narrower block`);
}
