import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertExit } from "../support/cli.ts";
import { sqlitePassOnly } from "../support/backend.ts";
import { json, startStubApi, type StubApi } from "../support/stub-api.ts";
import { runSvc } from "../support/svc.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

const workspace = "ws_0123456789abcdef01234567";

/**
 * The API behind HTTPS with a certificate of a private authority (a company's own): `svc`
 * sends through the request core's fetch, which trusts Node's store plus NODE_EXTRA_CA_CERTS
 * and nothing else (decision 46).
 */
describe("svc against an API served over HTTPS", { skip: sqlitePassOnly }, () => {
  let ca: TestCa;
  let stub: StubApi;

  before(async () => {
    ca = await sharedTestCa();
    stub = await startStubApi({ tls: { cert: ca.certPem, key: ca.keyPem } });
    stub.answer(json(200, { data: [], next_cursor: null }));
  });
  after(async () => {
    await stub.close();
  });

  const env = () => ({
    SERVICE_API_URL: stub.url,
    SERVICE_API_KEY: "svc_k",
    SERVICE_WORKSPACE_ID: workspace,
  });

  it("trusts an authority named by NODE_EXTRA_CA_CERTS", async () => {
    const run = await runSvc(["webhooks", "list", "--json"], {
      env: { ...env(), NODE_EXTRA_CA_CERTS: ca.caCertPath },
    });
    assertExit(run, 0);
    assert.equal(stub.received.at(-1)?.headers.authorization, "Bearer svc_k");
  });

  it("refuses a certificate it does not trust: api_unreachable, exit 6, naming the reason", async () => {
    const sent = stub.received.length;
    const run = await runSvc(["webhooks", "list"], { env: env() });
    assertExit(run, 6); // api_unreachable's exit status (docs/errors.md)
    assert.match(run.stderr, /Could not reach the API at https:\/\/127\.0\.0\.1:\d+ \([A-Z_]+\)\./);
    assert.match(run.stderr, /\(api_unreachable\)\n$/);
    assert.equal(stub.received.length, sent, "nothing reached the server");
  });
});
