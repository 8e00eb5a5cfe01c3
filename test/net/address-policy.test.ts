import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AddressPolicy, type AddressVerdict } from "../../src/net/address-policy.ts";
import {
  globalUnicastIPv6,
  ipv4Blocks,
  ipv6Blocks,
  type SpecialPurposeBlock,
} from "../../src/net/special-purpose-blocks.ts";
import { addressOnlyIn, blockRange, formatAddress } from "../support/address-blocks.ts";

function refusal(verdict: AddressVerdict, address: string): string {
  assert.ok(!verdict.allowed, `${address} was allowed`);
  return verdict.reason;
}

describe("the special-purpose block table", () => {
  const blocks = [...ipv4Blocks, ...ipv6Blocks];

  it("writes each block once, as a network address with its prefix", () => {
    assert.equal(new Set(blocks.map((block) => block.cidr)).size, blocks.length);
    for (const block of blocks) {
      const { family, prefix, first } = blockRange(block.cidr);
      assert.equal(`${formatAddress(first, family)}/${prefix}`, block.cidr);
      assert.match(block.rfc, /^RFC \d+$/, block.cidr);
    }
  });

  it("refuses even what IANA marks globally reachable, but for the NAT64 prefix", () => {
    const reachable = blocks.filter((block) => block.globallyReachable === true);
    assert.ok(reachable.length >= 10);
    const judgedByEmbedded = reachable.filter((block) => block.destination !== "refused");
    assert.deepEqual(
      judgedByEmbedded.map((block) => block.cidr),
      ["64:ff9b::/96"],
    );
  });
});

describe("AddressPolicy", () => {
  const policy = new AddressPolicy();

  it("allows public IPv4, and IPv6 inside 2000::/3", () => {
    for (const address of [
      "8.8.8.8",
      "93.184.215.14",
      "1.1.1.1",
      "2606:4700:4700::1111",
      "[2a00:1450::1]",
      "2001:4860::8888",
      "3ffe::1",
    ]) {
      assert.deepEqual(policy.check(address), { allowed: true, allowlisted: false }, address);
    }
  });

  it("refuses an address of every refused block in the table, naming the block", () => {
    const refusedBlocks = [...ipv4Blocks, ...ipv6Blocks].filter(
      (block) => block.destination === "refused",
    );
    for (const block of refusedBlocks) {
      const address = addressOnlyIn(block);
      assert.equal(
        refusal(policy.check(address), address),
        `is in the ${block.name} block ${block.cidr} (${block.rfc})`,
      );
    }
  });

  it("refuses IPv6 outside 2000::/3 that no block names", () => {
    for (const address of ["1::1", "4000::1", "e000::1", "fec0::1", "::ffff:0:808:808"]) {
      assert.equal(
        refusal(policy.check(address), address),
        `is outside ${globalUnicastIPv6}, the global unicast block (RFC 4291)`,
      );
    }
  });

  it("refuses IPv4-compatible addresses whatever IPv4 address they carry", () => {
    for (const address of ["::7f00:1", "::a00:1", "::a9fe:a9fe", "::808:808", "::2"]) {
      assert.match(refusal(policy.check(address), address), /IPv4-compatible IPv6 block ::\/96/);
    }
  });

  it("judges IPv4-mapped and well-known NAT64 forms by the IPv4 address they carry", () => {
    assert.equal(
      refusal(policy.check("::ffff:7f00:1"), "::ffff:7f00:1"),
      "carries the IPv4 address 127.0.0.1, which is in the loopback block 127.0.0.0/8 (RFC 1122)",
    );
    assert.match(
      refusal(policy.check("64:ff9b::a9fe:a9fe"), "NAT64"),
      /169\.254\.169\.254.*link-local/,
    );
    assert.equal(policy.check("::ffff:8.8.8.8").allowed, true);
    assert.equal(policy.check("64:ff9b::8.8.8.8").allowed, true);
  });

  it("refuses 6to4, Teredo and local-use NAT64 whatever they carry", () => {
    const cases: [string, SpecialPurposeBlock["name"]][] = [
      ["2002:808:808::1", "6to4"],
      ["2002:7f00:1::", "6to4"],
      ["2001:0:4136:e378::1", "Teredo"],
      ["64:ff9b:1::808:808", "local-use IPv4/IPv6 translation"],
    ];
    for (const [address, name] of cases) {
      assert.ok(refusal(policy.check(address), address).includes(`the ${name} block`), address);
    }
  });

  it("reads as one sentence, in the registry's words", () => {
    assert.equal(
      refusal(policy.check("169.254.169.254"), "metadata"),
      "is in the link-local block 169.254.0.0/16 (RFC 3927)",
    );
    assert.equal(
      refusal(policy.check("192.0.2.1"), "TEST-NET-1"),
      "is in the documentation (TEST-NET-1) block 192.0.2.0/24 (RFC 5737)",
    );
  });

  it("admits allowlisted ranges, including their IPv4-mapped forms, and nothing else", () => {
    const allowing = new AddressPolicy(["127.0.0.0/8", "::1/128"]);
    for (const address of ["127.0.0.1", "127.5.6.7", "::1", "::ffff:127.0.0.1"]) {
      assert.deepEqual(allowing.check(address), { allowed: true, allowlisted: true }, address);
    }
    assert.equal(allowing.check("10.0.0.1").allowed, false);
    assert.equal(allowing.check("fd00::1").allowed, false);
    assert.equal(allowing.check("::7f00:1").allowed, false, "IPv4-compatible is not mapped");
    assert.deepEqual(allowing.check("8.8.8.8"), { allowed: true, allowlisted: false });
  });

  it("lets the allowlist win over any block, IPv6 outside 2000::/3 included", () => {
    const allowing = new AddressPolicy(["::/96", "4000::/2", "192.0.0.9/32"]);
    for (const address of ["::7f00:1", "4000::1", "192.0.0.9"]) {
      assert.deepEqual(allowing.check(address), { allowed: true, allowlisted: true }, address);
    }
  });

  it("gives the same verdict every time, each policy its own", () => {
    const allowing = new AddressPolicy(["127.0.0.0/8"]);
    const strict = new AddressPolicy();
    for (let round = 0; round < 3; round += 1) {
      assert.equal(allowing.check("127.0.0.1").allowed, true);
      assert.equal(strict.check("127.0.0.1").allowed, false);
      assert.equal(allowing.check("10.0.0.1").allowed, false);
    }
    // Many distinct addresses (more than a policy remembers) change nothing.
    for (let index = 0; index < 5000; index += 1) {
      assert.equal(strict.check(`10.${index >> 8}.${index & 255}.1`).allowed, false);
    }
    assert.equal(strict.check("8.8.8.8").allowed, true);
    assert.equal(strict.check("10.0.0.1").allowed, false);
  });

  it("refuses a malformed allowlist range", () => {
    assert.throws(() => new AddressPolicy(["127.0.0.0/33"]));
    assert.equal(AddressPolicy.isValidCidr("10.0.0.0/8"), true);
    assert.equal(AddressPolicy.isValidCidr("10.0.0.0"), false);
  });
});
