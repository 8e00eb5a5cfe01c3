import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Resolver } from "../../src/interfaces.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import {
  checkDestinationUrl,
  parseDestinationUrl,
  type CheckedUrl,
} from "../../src/net/destination-url.ts";
import { PortSet } from "../../src/net/port-set.ts";
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
    ["half-local.example.test", ["127.0.0.1", "93.184.215.14"]],
    ["local.example.test", ["127.0.0.1"]],
  ]),
  noSystemDns,
);

function checker(
  options: { allowlist?: string[]; ports?: string[] } = {},
): (url: string) => Promise<CheckedUrl> {
  const dependencies = {
    resolver,
    addressPolicy: new AddressPolicy(options.allowlist),
    destinationPorts: new PortSet(options.ports ?? ["443", "8443"]),
  };
  return (url) => checkDestinationUrl(url, dependencies);
}

describe("checkDestinationUrl", () => {
  const check = checker();

  it("returns every checked address of a public name", async () => {
    assert.deepEqual((await check("https://hooks.example.test/x")).addresses, [
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
    assert.deepEqual((await check("https://8.8.8.8/")).addresses, ["8.8.8.8"]);
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

  it("returns the canonical form of the URL", async () => {
    const checked = await check("https://HOOKS.example.test:443/a/../b?q=é#top");
    assert.equal(checked.url.href, "https://hooks.example.test/b?q=%C3%A9#top");
  });
});

describe("destination ports", () => {
  it("allows the configured ports on public hosts, 443 when the URL names none", async () => {
    const check = checker({ ports: ["443", "8443"] });
    for (const url of ["https://8.8.8.8/", "https://8.8.8.8:443/", "https://8.8.8.8:8443/"]) {
      assert.equal((await check(url)).url.hostname, "8.8.8.8", url);
    }
  });

  it("refuses any other port with url_port_not_allowed, naming the allowed ones", async () => {
    const check = checker({ ports: ["443", "8443"] });
    for (const port of [22, 25, 80, 5432, 6379, 8080, 65535]) {
      await assert.rejects(check(`https://hooks.example.test:${port}/`), {
        code: "url_port_not_allowed",
        message: `The destination port ${port} is not allowed; this server delivers to ports 443, 8443.`,
      });
    }
  });

  it("follows the setting: ranges, and 443 left out", async () => {
    const check = checker({ ports: ["8443", "1024-65535"] });
    assert.equal((await check("https://8.8.8.8:5000/")).url.port, "5000");
    await assert.rejects(check("https://8.8.8.8/"), { code: "url_port_not_allowed" });
  });

  it("exempts hosts whose every address is allowlisted", async () => {
    const check = checker({ allowlist: ["127.0.0.0/8", "::1/128"] });
    assert.equal((await check("https://127.0.0.1:22/")).url.port, "22");
    assert.equal((await check("https://local.example.test:9000/")).url.port, "9000");
    await assert.rejects(check("https://half-local.example.test:9000/"), {
      code: "url_port_not_allowed",
    });
  });
});

describe("parseDestinationUrl", () => {
  it("refuses control characters, whitespace, bidirectional controls and lone surrogates anywhere, by code point", () => {
    const cases: [url: string, codePoint: string, kind: string, position: number][] = [
      ["https://8.8.8.8/ok\u001b]0;TITLE\u0007", "U+001B", "a control character", 19],
      ["\u0000https://8.8.8.8/", "U+0000", "a control character", 1],
      ["https://8.8.8.8/a\tb", "U+0009", "a control character", 18],
      ["https://8.8.8.8/\r\nSet-Cookie: x", "U+000D", "a control character", 17],
      ["https://8.8.8.8/\u007f", "U+007F", "a control character", 17],
      ["https://8.8.8.8/\u009b", "U+009B", "a control character", 17],
      ["https://8.8.8.8/a b", "U+0020", "a whitespace character", 18],
      ["https://8.8.8.8/\u00a0", "U+00A0", "a whitespace character", 17],
      ["https://8.8.8.8/\u2028", "U+2028", "a whitespace character", 17],
      ["https://8.8.8.8/\u2029", "U+2029", "a whitespace character", 17],
      ["https://8.8.8.8/\u3000", "U+3000", "a whitespace character", 17],
      ["https://exa\u1680mple.test/", "U+1680", "a whitespace character", 12],
      ["https://8.8.8.8/\u202egpj.exe", "U+202E", "a bidirectional control character", 17],
      ["https://8.8.8.8/\u061c", "U+061C", "a bidirectional control character", 17],
      ["https://8.8.8.8/\u200e", "U+200E", "a bidirectional control character", 17],
      ["https://8.8.8.8/\u2066", "U+2066", "a bidirectional control character", 17],
      ["https://8.8.8.8/😀\ud800", "U+D800", "an unpaired surrogate", 18],
      ["https://8.8.8.8/\udc00", "U+DC00", "an unpaired surrogate", 17],
    ];
    for (const [url, codePoint, kind, position] of cases) {
      assert.throws(
        () => parseDestinationUrl(url),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "invalid_url", codePoint);
          assert.equal(
            error.message,
            `The destination URL contains ${codePoint}, ${kind}, at position ${position}.`,
          );
          return true;
        },
      );
    }
  });

  it("keeps characters outside those kinds, percent-encoded in the canonical form", () => {
    assert.equal(parseDestinationUrl("https://8.8.8.8/😀").href, "https://8.8.8.8/%F0%9F%98%80");
    assert.equal(parseDestinationUrl("https://bücher.test/").href, "https://xn--bcher-kva.test/");
  });

  it("limits the URL as sent and its canonical form to 2048 characters", () => {
    const base = "https://hooks.example.test/";
    assert.equal(parseDestinationUrl(base + "a".repeat(2048 - base.length)).href.length, 2048);
    assert.throws(() => parseDestinationUrl(base + "a".repeat(2049 - base.length)), {
      code: "invalid_url",
      message: "The destination URL is 2049 characters long; at most 2048 are allowed.",
    });
    // 700 characters sent, 4,227 once each é is percent-encoded (%C3%A9).
    assert.throws(() => parseDestinationUrl(base + "é".repeat(700)), {
      code: "invalid_url",
      message:
        "The destination URL is 4227 characters long once normalised (characters outside ASCII are percent-encoded); at most 2048 are allowed.",
    });
  });
});
