import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { AppError } from "../../src/errors.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { checkDestinationUrl } from "../../src/net/destination-url.ts";
import { PortSet } from "../../src/net/port-set.ts";
import {
  ipv4Blocks,
  ipv6Blocks,
  type SpecialPurposeBlock,
} from "../../src/net/special-purpose-blocks.ts";
import { blockRange, contains, formatAddress, narrowestBlock } from "../support/address-blocks.ts";
import { sqlitePassOnly } from "../support/backend.ts";

/**
 * Properties of the address policy over every way a URL can write an address. Literals are
 * classified, never resolved: the resolver here fails the test if it is ever asked.
 */
const runs = { numRuns: 200 };

function urlChecker(allowlist: string[] = []): (url: string) => Promise<string> {
  const dependencies = {
    resolver: { resolve: () => Promise.reject(new Error("a literal was resolved")) },
    addressPolicy: new AddressPolicy(allowlist),
    destinationPorts: new PortSet(["443"]),
  };
  return async (url) => {
    try {
      return (await checkDestinationUrl(url, dependencies)).url.hostname;
    } catch (error) {
      if (error instanceof AppError) return error.code;
      throw error;
    }
  };
}

const refusedIPv4Blocks = ipv4Blocks.filter((block) => block.destination === "refused");
const refusedIPv6Blocks = ipv6Blocks.filter((block) => block.destination === "refused");

const inBlock = (block: SpecialPurposeBlock): fc.Arbitrary<bigint> => {
  const range = blockRange(block.cidr);
  return fc.bigInt(range.first, range.last);
};
const refusedIPv4 = fc.constantFrom(...refusedIPv4Blocks).chain(inBlock);
const refusedIPv6 = fc.constantFrom(...refusedIPv6Blocks).chain(inBlock);
const publicIPv4 = fc
  .bigInt(0n, 2n ** 32n - 1n)
  .filter((value) => narrowestBlock(4, value) === undefined);

const octets = (value: bigint): number[] =>
  [24n, 16n, 8n, 0n].map((shift) => Number((value >> shift) & 0xffn));
const hex = (value: bigint | number): string => value.toString(16);

/** Every host notation the WHATWG URL parser reads as the IPv4 address `value`. */
function ipv4Forms(value: bigint): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = octets(value);
  const dotted = `${a}.${b}.${c}.${d}`;
  return [
    dotted,
    `${dotted}.`,
    value.toString(),
    `0x${hex(value)}`,
    `0X${hex(value).toUpperCase()}`,
    `0${value.toString(8)}`,
    [a, b, c, d].map((octet) => `0x${hex(octet)}`).join("."),
    [a, b, c, d].map((octet) => `0${octet.toString(8)}`).join("."),
    `${a}.${b}.${c * 256 + d}`,
    `${a}.${(b << 16) + (c << 8) + d}`,
    Array.from(dotted)
      .map((character) => `%${hex(character.charCodeAt(0))}`)
      .join(""),
    // Full-width digits and ideographic full stops, which IDNA maps to ASCII.
    Array.from(dotted)
      .map((character) =>
        character === "." ? "\u3002" : String.fromCharCode(0xff10 + Number(character)),
      )
      .join(""),
  ];
}

/** The IPv6 literals that carry the IPv4 address `value` in their last 32 bits. */
function embeddingForms(value: bigint): { mappedOrNat64: string[]; refusedOutright: string[] } {
  const dotted = octets(value).join(".");
  const high = hex(value >> 16n);
  const low = hex(value & 0xffffn);
  return {
    mappedOrNat64: [
      `[::ffff:${dotted}]`,
      `[::ffff:${high}:${low}]`,
      `[0:0:0:0:0:FFFF:${dotted}]`,
      `[64:ff9b::${dotted}]`,
      `[64:ff9b::${high}:${low}]`,
    ],
    refusedOutright: [`[::${dotted}]`, `[::${high}:${low}]`, `[2002:${high}:${low}::1]`],
  };
}

/** Every notation of the IPv6 address `value`: compressed, expanded, upper case, mixed. */
function ipv6Forms(value: bigint): string[] {
  const groups = [...Array(8).keys()].map((index) =>
    Number((value >> BigInt((7 - index) * 16)) & 0xffffn),
  );
  const expanded = groups.map((group) => hex(group).padStart(4, "0")).join(":");
  const dottedTail = octets(value & 0xffffffffn).join(".");
  return [
    formatAddress(value, 6),
    expanded,
    expanded.toUpperCase(),
    groups.map(hex).join(":"),
    `${groups.slice(0, 6).map(hex).join(":")}:${dottedTail}`,
  ].map((form) => `[${form}]`);
}

describe("address policy properties", { skip: sqlitePassOnly }, () => {
  const check = urlChecker();

  it("refuses any address of a refused IPv4 block in every notation and IPv6 embedding", async () => {
    await fc.assert(
      fc.asyncProperty(refusedIPv4, async (value) => {
        const { mappedOrNat64, refusedOutright } = embeddingForms(value);
        for (const host of [...ipv4Forms(value), ...mappedOrNat64, ...refusedOutright]) {
          assert.equal(await check(`https://${host}/`), "url_not_public", host);
        }
      }),
      runs,
    );
  });

  it("refuses any address of a refused IPv6 block in every notation", async () => {
    await fc.assert(
      fc.asyncProperty(refusedIPv6, async (value) => {
        for (const host of ipv6Forms(value)) {
          assert.equal(await check(`https://${host}/`), "url_not_public", host);
        }
      }),
      runs,
    );
  });

  it("refuses any IPv6 address outside 2000::/3 that does not carry a public IPv4 address", async () => {
    const embedding = ["::ffff:0:0/96", "64:ff9b::/96"].map(blockRange);
    const outside = fc
      .bigInt(0n, 2n ** 128n - 1n)
      .filter((value) => value >> 125n !== 1n)
      .filter((value) => !embedding.some((range) => contains(range, 6, value)));
    await fc.assert(
      fc.asyncProperty(outside, async (value) => {
        const host = `[${formatAddress(value, 6)}]`;
        assert.equal(await check(`https://${host}/`), "url_not_public", host);
      }),
      runs,
    );
  });

  it("allows any IPv6 address of 2000::/3 outside every block", async () => {
    const global = fc
      .bigInt(1n << 125n, (2n << 125n) - 1n)
      .filter((value) => narrowestBlock(6, value) === undefined);
    await fc.assert(
      fc.asyncProperty(global, async (value) => {
        for (const host of ipv6Forms(value)) {
          assert.equal(await check(`https://${host}/`), `[${formatAddress(value, 6)}]`);
        }
      }),
      runs,
    );
  });

  it("allows a public IPv4 address in every notation, mapped or NAT64, never compatible or 6to4", async () => {
    await fc.assert(
      fc.asyncProperty(publicIPv4, async (value) => {
        const dotted = octets(value).join(".");
        for (const host of ipv4Forms(value)) {
          assert.equal(await check(`https://${host}/`), dotted, host);
        }
        const { mappedOrNat64, refusedOutright } = embeddingForms(value);
        for (const host of mappedOrNat64) {
          assert.match(await check(`https://${host}/`), /^\[(::ffff|64:ff9b::)/, host);
        }
        for (const host of refusedOutright) {
          assert.equal(await check(`https://${host}/`), "url_not_public", host);
        }
      }),
      runs,
    );
  });

  it("lets the allowlist win: any range around a refused address admits it, IPv4-mapped too", () => {
    const refusedAddress = fc.oneof(
      refusedIPv4.map((value) => ({ family: 4 as const, value })),
      refusedIPv6.map((value) => ({ family: 6 as const, value })),
    );
    const allowlisted = refusedAddress.chain(({ family, value }) =>
      fc.integer({ min: 0, max: family === 4 ? 32 : 128 }).map((prefix) => {
        const hostBits = BigInt((family === 4 ? 32 : 128) - prefix);
        const network = (value >> hostBits) << hostBits;
        return { family, value, cidr: `${formatAddress(network, family)}/${prefix}` };
      }),
    );
    fc.assert(
      fc.property(allowlisted, ({ family, value, cidr }) => {
        const policy = new AddressPolicy([cidr]);
        assert.deepEqual(policy.check(formatAddress(value, family)), {
          allowed: true,
          allowlisted: true,
        });
        if (family === 4) {
          const mapped = `::ffff:${octets(value).join(".")}`;
          assert.deepEqual(policy.check(mapped), { allowed: true, allowlisted: true });
        }
      }),
      runs,
    );
  });
});
