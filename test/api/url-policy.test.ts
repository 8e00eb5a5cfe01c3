import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type DestinationJson, type ErrorJson } from "../support/api.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";

/**
 * Creation only classifies addresses: nothing here is ever contacted. Names resolve from the
 * server's fixed test table (support/server.ts), never from the system resolver.
 */
const rejected: readonly [url: string, code: string][] = [
  ["http://public.example.test/", "invalid_url"],
  // Characters the URL parser would drop or keep silently, and ones that only mislead.
  ["https://8.8.8.8/ok\u001b]0;TITLE\u0007\u001b[2J", "invalid_url"],
  ["https://8.8.8.8/\r\nX-Injected: 1", "invalid_url"],
  ["https://8.8.8.8/a\tb", "invalid_url"],
  ["https://8.8.8.8/\u0000", "invalid_url"],
  ["https://8.8.8.8/\u0085", "invalid_url"],
  ["https://8.8.8.8/\u202egpj.exe", "invalid_url"],
  ["https://8.8.8.8/\u2066", "invalid_url"],
  ["https://8.8.8.8/\ud800", "invalid_url"],
  ["https://8.8.8.8/\u00a0", "invalid_url"],
  ["https://8.8.8.8/\u2028", "invalid_url"],
  ["https://8.8.8.8/\u3000", "invalid_url"],
  [" https://8.8.8.8/", "invalid_url"],
  // 728 characters sent, more than 2048 once percent-encoded.
  [`https://public.example.test/${"é".repeat(700)}`, "invalid_url"],
  ["ftp://public.example.test/", "invalid_url"],
  ["https://user:pass@public.example.test/", "invalid_url"],
  ["https://user@public.example.test/", "invalid_url"],
  ["not a url", "invalid_url"],
  [
    `https://public.example.test/${"a".repeat(2049 - "https://public.example.test/".length)}`,
    "invalid_url",
  ],
  ["https://localhost/", "url_not_public"],
  ["https://api.localhost/", "url_not_public"],
  ["https://127.0.0.1/", "url_not_public"],
  ["https://127.1/", "url_not_public"],
  ["https://0x7f.1/", "url_not_public"],
  ["https://0x7f000001/", "url_not_public"],
  ["https://2130706433/", "url_not_public"],
  ["https://017700000001/", "url_not_public"],
  ["https://[::1]/", "url_not_public"],
  ["https://[::ffff:127.0.0.1]/", "url_not_public"],
  ["https://[::ffff:7f00:1]/", "url_not_public"],
  ["https://[::ffff:10.1.2.3]/", "url_not_public"],
  ["https://[64:ff9b::a00:1]/", "url_not_public"],
  ["https://[64:ff9b::7f00:1]/", "url_not_public"],
  ["https://10.0.0.1/", "url_not_public"],
  ["https://10.255.255.255/", "url_not_public"],
  ["https://172.16.0.1/", "url_not_public"],
  ["https://172.31.255.254/", "url_not_public"],
  ["https://192.168.0.1/", "url_not_public"],
  ["https://169.254.169.254/latest/meta-data", "url_not_public"],
  ["https://100.64.0.1/", "url_not_public"],
  ["https://100.127.255.254/", "url_not_public"],
  ["https://0.0.0.0/", "url_not_public"],
  ["https://0/", "url_not_public"],
  ["https://224.0.0.1/", "url_not_public"],
  ["https://239.255.255.250/", "url_not_public"],
  ["https://255.255.255.255/", "url_not_public"],
  ["https://192.0.2.10/", "url_not_public"],
  ["https://198.51.100.10/", "url_not_public"],
  ["https://203.0.113.10/", "url_not_public"],
  ["https://[fc00::1]/", "url_not_public"],
  ["https://[fd12:3456::1]/", "url_not_public"],
  ["https://[fe80::1]/", "url_not_public"],
  ["https://[::]/", "url_not_public"],
  ["https://[ff02::1]/", "url_not_public"],
  ["https://[2001:db8::1]/", "url_not_public"],
  // IPv4-compatible (::/96) whatever it carries, and IPv6 outside 2000::/3.
  ["https://[::127.0.0.1]/", "url_not_public"],
  ["https://[::7f00:1]/", "url_not_public"],
  ["https://[::10.0.0.1]/", "url_not_public"],
  ["https://[::a9fe:a9fe]/", "url_not_public"],
  ["https://[::8.8.8.8]/", "url_not_public"],
  ["https://[::2]/", "url_not_public"],
  ["https://[1::1]/", "url_not_public"],
  ["https://[4000::1]/", "url_not_public"],
  ["https://[e000::1]/", "url_not_public"],
  ["https://[::ffff:0:808:808]/", "url_not_public"],
  ["https://compatible.example.test/", "url_not_public"],
  // Special-purpose blocks inside 2000::/3, and IPv4 ones ipaddr.js called unicast.
  ["https://[2002:808:808::1]/", "url_not_public"],
  ["https://[2001:0:4136:e378::1]/", "url_not_public"],
  ["https://[2001:2::1]/", "url_not_public"],
  ["https://[2001:20::1]/", "url_not_public"],
  ["https://[3fff::1]/", "url_not_public"],
  ["https://[5f00::1]/", "url_not_public"],
  ["https://[64:ff9b:1::808:808]/", "url_not_public"],
  ["https://192.0.0.9/", "url_not_public"],
  ["https://192.31.196.1/", "url_not_public"],
  ["https://192.88.99.1/", "url_not_public"],
  ["https://198.18.0.1/", "url_not_public"],
  // Ports outside the default setting (443 and 8443).
  ["https://8.8.8.8:22/", "url_port_not_allowed"],
  ["https://public.example.test:25/", "url_port_not_allowed"],
  ["https://public.example.test:5432/", "url_port_not_allowed"],
  ["https://[2606:4700:4700::1111]:8080/", "url_port_not_allowed"],
  ["https://8.8.8.8:0/", "url_port_not_allowed"],
  ["https://private.example.test/", "url_not_public"],
  ["https://loopback.example.test/", "url_not_public"],
  ["https://metadata.example.test/", "url_not_public"],
  ["https://v6local.example.test/", "url_not_public"],
  ["https://empty.example.test/", "url_not_public"],
  ["https://mixed.example.test/", "url_not_public"],
];

/** What was sent, and what is stored and returned: the URL parser's canonical form. */
const accepted: readonly [sent: string, stored: string][] = [
  ["https://93.184.215.14/hooks", "https://93.184.215.14/hooks"],
  ["https://8.8.8.8:8443/path?q=1", "https://8.8.8.8:8443/path?q=1"],
  ["https://[2606:4700:4700::1111]/hooks", "https://[2606:4700:4700::1111]/hooks"],
  ["https://[2606:4700:4700:0:0:0:0:1111]/", "https://[2606:4700:4700::1111]/"],
  ["https://[::ffff:8.8.8.8]/", "https://[::ffff:808:808]/"],
  ["https://[64:ff9b::808:808]/", "https://[64:ff9b::808:808]/"],
  ["https://0x08.8.8.8/", "https://8.8.8.8/"],
  ["https://public.example.test/hooks", "https://public.example.test/hooks"],
  ["https://PUBLIC.example.test./hooks", "https://public.example.test./hooks"],
  ["https://public.example.test:443/a/../b", "https://public.example.test/b"],
  ["https://public.example.test/😀?q=é", "https://public.example.test/%F0%9F%98%80?q=%C3%A9"],
  ["https://public6.example.test", "https://public6.example.test/"],
  ["https://dual.example.test/", "https://dual.example.test/"],
  [
    `https://public.example.test/${"a".repeat(2048 - "https://public.example.test/".length)}`,
    `https://public.example.test/${"a".repeat(2048 - "https://public.example.test/".length)}`,
  ],
];

/** A test name that shows every character outside printable ASCII as its code point. */
function printable(url: string): string {
  if (url.length > 60) return `${url.slice(0, 40)}… (${url.length} characters)`;
  return url.replace(/[^\x20-\x7e]/gu, (character) => {
    return `\\u{${(character.codePointAt(0) ?? 0).toString(16)}}`;
  });
}

describe("destination URL network policy", () => {
  let fixture: ServerFixture;
  let api: ApiClient;
  let base: string;

  before(async () => {
    fixture = await serverFixture();
    api = apiClient(fixture.server.url, fixture.owner.key);
    base = `/v1/workspaces/${fixture.owner.id}/webhooks`;
  });
  after(() => fixture.dispose());

  it("the rejected list covers at least 30 URLs", () => {
    assert.ok(rejected.length >= 30);
  });

  for (const [url, code] of rejected) {
    it(`rejects ${printable(url)} with ${code}`, async () => {
      const response = await api.post<ErrorJson>(base, { url });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.error.code, code);
      assert.equal(response.body.error.param, "url");
    });
  }

  for (const [sent, stored] of accepted) {
    it(`accepts ${printable(sent)}, stored as its canonical form`, async () => {
      const response = await api.post<DestinationJson>(base, { url: sent });
      assert.equal(response.status, 201, response.text);
      assert.equal(response.body.url, stored);
      const read = await api.get<DestinationJson>(`${base}/${response.body.id}`);
      assert.equal(read.body.url, stored);
    });
  }

  it("nothing rejected was registered", async () => {
    const listed = await api.get<{ data: DestinationJson[] }>(`${base}?limit=100`);
    assert.equal(listed.body.data.length, accepted.length);
  });

  it("names a refused character by code point, never echoing it", async () => {
    const url = "https://8.8.8.8/ok\u001b]0;TITLE\u0007";
    const response = await api.post<ErrorJson>(base, { url });
    assert.equal(
      response.body.error.message,
      "The destination URL contains U+001B, a control character, at position 19.",
    );
    assert.ok(!response.text.includes("TITLE") && !/\\u001b/i.test(response.text));
  });

  it("says once why an address literal is refused, in the registry's words", async () => {
    const response = await api.post<ErrorJson>(base, { url: "https://169.254.169.254/" });
    assert.equal(
      response.body.error.message,
      "The destination host 169.254.169.254 is not on the public internet: it is in the link-local block 169.254.0.0/16 (RFC 3927).",
    );
  });

  it("applies the same rules to an update, and stores its canonical form", async () => {
    const created = await api.post<DestinationJson>(base, { url: "https://8.8.8.8/first" });
    const member = `${base}/${created.body.id}`;
    for (const [url, code] of [
      ["https://8.8.8.8/\r\nX-Injected: 1", "invalid_url"],
      ["https://[::7f00:1]/", "url_not_public"],
      ["https://8.8.8.8:22/", "url_port_not_allowed"],
    ] as const) {
      const refused = await api.patch<ErrorJson>(member, { url });
      assert.equal(refused.body.error.code, code, url);
    }
    const updated = await api.patch<DestinationJson>(member, {
      url: "https://PUBLIC.example.test:443/a/../b",
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.url, "https://public.example.test/b");
    assert.equal(
      (await api.get<DestinationJson>(member)).body.url,
      "https://public.example.test/b",
    );
    await api.delete(member);
  });
});

describe("SVC_ALLOW_PRIVATE_NETWORKS", () => {
  let fixture: ServerFixture;
  let api: ApiClient;
  let base: string;

  before(async () => {
    fixture = await serverFixture({
      SVC_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8,::1/128",
      SVC_DESTINATION_PORTS: "443,9443",
    });
    api = apiClient(fixture.server.url, fixture.owner.key);
    base = `/v1/workspaces/${fixture.owner.id}/webhooks`;
  });
  after(() => fixture.dispose());

  it("admits the allowlisted ranges in every notation", async () => {
    for (const url of [
      "https://127.0.0.1:9443/",
      "https://0x7f.1/",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://loopback.example.test/",
    ]) {
      const response = await api.post(base, { url });
      assert.equal(response.status, 201, `${url}: ${response.text}`);
    }
  });

  it("lets allowlisted hosts use any port, and public ones only SVC_DESTINATION_PORTS", async () => {
    for (const url of ["https://127.0.0.1:22/", "https://loopback.example.test:8080/"]) {
      const response = await api.post(base, { url });
      assert.equal(response.status, 201, `${url}: ${response.text}`);
    }
    assert.equal((await api.post(base, { url: "https://8.8.8.8:9443/" })).status, 201);
    const refused = await api.post<ErrorJson>(base, { url: "https://8.8.8.8:8443/" });
    assert.equal(refused.body.error.code, "url_port_not_allowed");
    assert.equal(
      refused.body.error.message,
      "The destination port 8443 is not allowed; this server delivers to ports 443, 9443.",
    );
  });

  it("still refuses private ranges outside the allowlist", async () => {
    for (const url of ["https://10.0.0.1/", "https://[fd00::1]/", "https://169.254.169.254/"]) {
      const response = await api.post<ErrorJson>(base, { url });
      assert.equal(response.body.error.code, "url_not_public", url);
    }
  });
});
