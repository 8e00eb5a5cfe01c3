import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { newOperatorToken } from "../../src/crypto/tokens.ts";
import { json, startStubApi, type StubApi } from "../support/stub-api.ts";
import { startTerminal, type Terminal } from "../support/terminal.ts";
import { sqlitePassOnly } from "../support/backend.ts";

/**
 * `svc workspaces delete` on a real terminal: it asks first, and sends nothing unless the
 * answer is yes. The API is a stub: what is checked is what the command sends.
 */
describe("svc workspaces delete on a terminal", { skip: sqlitePassOnly }, () => {
  let stub: StubApi;
  const terminals: Terminal[] = [];

  before(async () => {
    stub = await startStubApi();
    stub.answer(json(200, { id: "ws_acme", deleted: true }));
  });
  after(async () => {
    await Promise.all(terminals.map((terminal) => terminal.close()));
    await stub.close();
  });

  const open = async (args: readonly string[]): Promise<Terminal> => {
    const terminal = await startTerminal(args, {
      SERVICE_API_URL: stub.url,
      SERVICE_API_KEY: newOperatorToken(),
    });
    terminals.push(terminal);
    return terminal;
  };

  it("--cascade asks, naming what goes with it; no sends nothing", async () => {
    const terminal = await open(["workspaces", "delete", "ws_acme", "--cascade"]);
    await terminal.waitFor(
      /Delete workspace ws_acme and everything in it \(destinations, events, deliveries, API keys.*\[y\/N\]/,
    );
    await terminal.typeLine("n");
    assert.equal(await terminal.exitStatus(), 2);
    assert.match(
      await terminal.screen(),
      /Cancelled: workspace ws_acme was not deleted\. \(cancelled\)/,
    );
    assert.deepEqual(stub.received, []);
  });

  it("yes deletes with ?cascade=true and prints deleted: true", async () => {
    const terminal = await open(["workspaces", "delete", "ws_acme", "--cascade"]);
    await terminal.waitFor(/\[y\/N\]/);
    await terminal.typeLine("y");
    assert.equal(await terminal.exitStatus(), 0);
    assert.match(await terminal.screen(), /^deleted: true$/m);
    assert.deepEqual(
      stub.received.map((request) => `${request.method} ${request.url}`),
      ["DELETE /v1/workspaces/ws_acme?cascade=true"],
    );
  });
});
