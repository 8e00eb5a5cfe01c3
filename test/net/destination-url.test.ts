import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Resolver } from "../../src/interfaces.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { checkDestinationUrl } from "../../src/net/destination-url.ts";
import { tableResolver } from "../../src/net/resolver.ts";

const noSystemDns: Resolver = {
  resolve: (hostname) => Promise.reject(new Error(`${hostname}: not in the test table`)),
};

const resolver = tableResolver(
  new Map([
    ["hooks.example.test", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]],
    ["rebind.example.test", ["93.184.215.14", "10.0.0.1"]],
    ["compatible.example.test", ["::7f00:1"]],
    ["nothing.example.test", []],
  ]),
  noSystemDns,
);

describe("checkDestinationUrl", () => {
  const policy = new AddressPolicy();
  const check = (url: string): Promise<string[]> =>
    checkDestinationUrl(url, { resolver, addressPolicy: policy });

  it("returns every checked address of a public name", async () => {
    assert.deepEqual(await check("https://hooks.example.test/x"), [
      "93.184.215.14",
      "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]);
  });

  it("refuses a name with one public and one private address, without telling which", async () => {
    await assert.rejects(check("https://rebind.example.test/"), (error: Error) => {
      assert.equal((error as { code?: string }).code, "url_not_public");
      assert.equal(
        error.message,
        "The destination host rebind.example.test is not on the public internet (it resolves to a non-public address).",
      );
      return true;
    });
  });

  it("refuses a name that resolves to an IPv4-compatible address", async () => {
    await assert.rejects(check("https://compatible.example.test/"), { code: "url_not_public" });
  });

  it("reports a name that does not resolve, or resolves to nothing, as url_unresolvable", async () => {
    await assert.rejects(check("https://missing.example.test/"), { code: "url_unresolvable" });
    await assert.rejects(check("https://nothing.example.test/"), { code: "url_unresolvable" });
  });

  it("treats localhost names as loopback without asking a resolver", async () => {
    await assert.rejects(check("https://localhost/"), { code: "url_not_public" });
    await assert.rejects(check("https://a.b.LOCALHOST./"), { code: "url_not_public" });
  });

  it("classifies IP literals without resolving them, saying once why one is refused", async () => {
    assert.deepEqual(await check("https://8.8.8.8/"), ["8.8.8.8"]);
    await assert.rejects(check("https://[::127.0.0.1]/"), {
      code: "url_not_public",
      message:
        "The destination host [::7f00:1] is not on the public internet: it is in the deprecated IPv4-compatible IPv6 block ::/96 (RFC 4291).",
    });
    await assert.rejects(check("https://0x7f.1/"), {
      message:
        "The destination host 127.0.0.1 is not on the public internet: it is in the loopback block 127.0.0.0/8 (RFC 1122).",
    });
  });
});
