import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { checkDestinationUrl } from "../../src/net/destination-url.ts";
import { tableResolver } from "../../src/net/resolver.ts";
import type { Resolver } from "../../src/interfaces.ts";

const noSystemDns: Resolver = {
  resolve: (hostname) => Promise.reject(new Error(`${hostname}: not in the test table`)),
};

describe("AddressPolicy", () => {
  const policy = new AddressPolicy();

  it("allows public unicast IPv4 and IPv6", () => {
    for (const address of ["8.8.8.8", "93.184.215.14", "2606:4700:4700::1111", "[2a00:1450::1]"]) {
      assert.deepEqual(policy.check(address), { allowed: true }, address);
    }
  });

  it("refuses every special-purpose range, naming it", () => {
    const cases: [string, RegExp][] = [
      ["127.0.0.1", /loopback/],
      ["10.1.2.3", /private/],
      ["172.20.0.1", /private/],
      ["192.168.1.1", /private/],
      ["169.254.169.254", /linkLocal/],
      ["100.64.0.1", /carrierGradeNat/],
      ["0.0.0.0", /unspecified/],
      ["224.0.0.251", /multicast/],
      ["255.255.255.255", /broadcast/],
      ["192.0.2.1", /reserved/],
      ["240.0.0.1", /reserved/],
      ["::1", /loopback/],
      ["::", /unspecified/],
      ["fe80::1", /linkLocal/],
      ["fd00::1", /uniqueLocal/],
      ["ff02::1", /multicast/],
      ["2001:db8::1", /reserved/],
      ["2002:7f00:1::", /6to4/],
      ["2001:0:4136:e378::1", /teredo/],
      ["64:ff9b:1::a00:1", /rfc6052/],
    ];
    for (const [address, reason] of cases) {
      const verdict = policy.check(address);
      assert.ok(!verdict.allowed, address);
      assert.match(verdict.reason, reason, address);
    }
  });

  it("judges IPv4-mapped, translated and NAT64 forms by the IPv4 address they carry", () => {
    assert.equal(policy.check("::ffff:127.0.0.1").allowed, false);
    assert.equal(policy.check("::ffff:7f00:1").allowed, false);
    assert.equal(policy.check("::ffff:0:a00:1").allowed, false);
    assert.equal(policy.check("64:ff9b::192.168.0.1").allowed, false);
    assert.equal(policy.check("::ffff:8.8.8.8").allowed, true);
    assert.equal(policy.check("64:ff9b::8.8.8.8").allowed, true);
  });

  it("admits allowlisted ranges, including their IPv4-mapped forms, and nothing else", () => {
    const allowing = new AddressPolicy(["127.0.0.0/8", "::1/128"]);
    assert.equal(allowing.check("127.0.0.1").allowed, true);
    assert.equal(allowing.check("127.5.6.7").allowed, true);
    assert.equal(allowing.check("::1").allowed, true);
    assert.equal(allowing.check("::ffff:127.0.0.1").allowed, true);
    assert.equal(allowing.check("10.0.0.1").allowed, false);
    assert.equal(allowing.check("fd00::1").allowed, false);
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

describe("checkDestinationUrl", () => {
  const policy = new AddressPolicy();
  const resolver = tableResolver(
    new Map([
      ["hooks.example.test", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]],
      ["rebind.example.test", ["93.184.215.14", "10.0.0.1"]],
      ["nothing.example.test", []],
    ]),
    noSystemDns,
  );
  const check = (url: string): Promise<string[]> =>
    checkDestinationUrl(url, { resolver, addressPolicy: policy });

  it("returns every checked address of a public name", async () => {
    assert.deepEqual(await check("https://hooks.example.test/x"), [
      "93.184.215.14",
      "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]);
  });

  it("refuses a name with one public and one private address", async () => {
    await assert.rejects(check("https://rebind.example.test/"), { code: "url_not_public" });
  });

  it("reports a name that does not resolve, or resolves to nothing, as url_unresolvable", async () => {
    await assert.rejects(check("https://missing.example.test/"), { code: "url_unresolvable" });
    await assert.rejects(check("https://nothing.example.test/"), { code: "url_unresolvable" });
  });

  it("treats localhost names as loopback without asking a resolver", async () => {
    await assert.rejects(check("https://localhost/"), { code: "url_not_public" });
    await assert.rejects(check("https://a.b.LOCALHOST./"), { code: "url_not_public" });
  });

  it("classifies IP literals without resolving them", async () => {
    assert.deepEqual(await check("https://8.8.8.8/"), ["8.8.8.8"]);
    await assert.rejects(check("https://0x7f.1/"), { code: "url_not_public" });
  });
});
