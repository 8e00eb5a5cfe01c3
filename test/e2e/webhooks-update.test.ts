import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import {
  assertExit,
  closedPortUrl,
  envelope,
  registerDirectly,
  svcAgainst,
} from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createWorkspace } from "../support/server.ts";
import type { SvcRun, SvcRunOptions } from "../support/svc.ts";

const url = "https://public.example.test/hooks";

describe("svc webhooks update", () => {
  let fixture: ServerFixture;
  let svc: (args: readonly string[], options?: SvcRunOptions) => Promise<SvcRun>;
  let nowhere: string;

  before(async () => {
    fixture = await serverFixture();
    svc = svcAgainst(fixture);
    nowhere = await closedPortUrl();
  });
  after(() => fixture.dispose());

  const fetchDestination = async (id: string): Promise<DestinationJson> => {
    const response = await apiClient(fixture.server.url, fixture.owner.key).get<DestinationJson>(
      `/v1/workspaces/${fixture.owner.id}/webhooks/${id}`,
    );
    assert.equal(response.status, 200, response.text);
    return response.body;
  };

  /** Runs `update` where nothing listens: a usage error proves no request was attempted. */
  const updateOffline = (args: readonly string[], input?: string) =>
    svc(["webhooks", "update", ...args], {
      env: { SERVICE_API_URL: nowhere },
      ...(input === undefined ? {} : { input }),
    });

  it("--active false deactivates and --active true reactivates, preserving the settings (SPEC 3.1)", async () => {
    const created = await registerDirectly(fixture, { url, events: ["job.failed"] });
    const paused = await svc(["webhooks", "update", created.id, "--active", "false", "--json"]);
    assertExit(paused, 0);
    const pausedData = envelope<DestinationJson>(paused).data;
    assert.equal(pausedData.active, false);
    assert.equal(pausedData.url, url);
    assert.deepEqual(pausedData.events, ["job.failed"]);
    assert.equal((await fetchDestination(created.id)).active, false);

    const resumed = await svc(["webhooks", "update", created.id, "--active", "true"]);
    assertExit(resumed, 0);
    assert.match(resumed.stdout, /^active: +true$/m);
    const after = await fetchDestination(created.id);
    assert.equal(after.active, true);
    assert.equal(after.url, url);
    assert.deepEqual(after.events, ["job.failed"]);
    assert.equal(after.created_at, created.created_at);
  });

  it("changes only the fields supplied; omitted ones are preserved (SPEC 4.5)", async () => {
    const created = await registerDirectly(fixture, { url, events: ["job.completed"] });
    await svc(["webhooks", "update", created.id, "--active", "false"]);
    const run = await svc([
      "webhooks",
      "update",
      created.id,
      "--url",
      "https://dual.example.test/v2",
      "--events",
      "collection.completed,job.failed",
    ]);
    assertExit(run, 0);
    const after = await fetchDestination(created.id);
    assert.equal(after.url, "https://dual.example.test/v2");
    assert.deepEqual(after.events, ["collection.completed", "job.failed"]);
    assert.equal(after.active, false, "active was not supplied, so it is preserved");
  });

  it("with nothing supplied it is a usage error, raised before any request (SPEC 4.5, 7)", async () => {
    const run = await updateOffline(["dst_000000000000000000000000"]);
    assertExit(run, 2);
    assert.match(
      run.stderr,
      /^error: Nothing to update: .*--url, --events or --active.*\(usage_error\)\n$/,
    );
    assert.doesNotMatch(run.stderr, /api_unreachable/);
  });

  it("an empty JSON object on --stdin is a usage error, raised before any request (SPEC 4.5, 7)", async () => {
    const run = await updateOffline(["dst_000000000000000000000000", "--stdin"], "{}");
    assertExit(run, 2);
    assert.match(run.stderr, /Nothing to update/);
    assert.doesNotMatch(run.stderr, /api_unreachable/);
    const json = await updateOffline(["dst_000000000000000000000000", "--stdin", "--json"], "{ }");
    assertExit(json, 2);
    assert.equal(envelope(json).error.code, "usage_error");
  });

  it("the same update with a field does reach for the API: the offline check above is meaningful", async () => {
    const run = await updateOffline(["dst_000000000000000000000000", "--active", "false"]);
    assertExit(run, 6);
    assert.match(
      run.stderr,
      new RegExp(`Could not reach the API at ${nowhere}.*\\(api_unreachable\\)`),
    );
  });

  it("--active needs a value, and only true or false", async () => {
    const missing = await updateOffline(["dst_000000000000000000000000", "--active"]);
    assertExit(missing, 2);
    assert.match(missing.stderr, /option '--active <true\|false>' argument missing/);
    assert.match(missing.stderr, /svc webhooks update --help/);
    const wrong = await updateOffline(["dst_000000000000000000000000", "--active", "no"]);
    assertExit(wrong, 2);
    assert.match(wrong.stderr, /Allowed choices are true, false/);
  });

  it("undefined event names are rejected before any request, naming them (SPEC 4.5)", async () => {
    const run = await updateOffline(["dst_000000000000000000000000", "--events", "job.done"]);
    assertExit(run, 2);
    assert.match(run.stderr, /Unknown event "job\.done"/);
    const json = await updateOffline(
      ["dst_000000000000000000000000", "--stdin"],
      '{"events":["job.done"]}',
    );
    assertExit(json, 2);
    assert.match(json.stderr, /Unknown event "job\.done"/);
  });

  it("reads --stdin JSON, and a flag wins over the same member", async () => {
    const created = await registerDirectly(fixture, { url, events: ["job.completed"] });
    const run = await svc(
      ["webhooks", "update", created.id, "--stdin", "--active", "true", "--json"],
      {
        input: JSON.stringify({ active: false, events: ["job.failed"] }),
      },
    );
    assertExit(run, 0);
    const { data } = envelope<DestinationJson>(run);
    assert.equal(data.active, true, "--active wins over the JSON member");
    assert.deepEqual(data.events, ["job.failed"], "the JSON member without a flag applies");
  });

  it("malformed JSON on --stdin is a usage error pointing at --help", async () => {
    const run = await updateOffline(["dst_000000000000000000000000", "--stdin"], "{active: false}");
    assertExit(run, 2);
    assert.match(
      run.stderr,
      /--stdin: standard input is not valid JSON.*See `svc webhooks update --help`\./,
    );
  });

  it("cannot change or read the signing secret (SPEC 1.6, 4.5)", async () => {
    const created = await registerDirectly(fixture, { url });
    const attempt = await svc(["webhooks", "update", created.id, "--stdin"], {
      input: JSON.stringify({ secret: "whsec_chosen" }),
    });
    assertExit(attempt, 2);
    assert.match(
      attempt.stderr,
      /unknown member "secret"; `svc webhooks update` takes url, events, active/,
    );
    const run = await svc(["webhooks", "update", created.id, "--active", "false", "--json"]);
    assertExit(run, 0);
    assert.ok(!("secret" in envelope<Record<string, unknown>>(run).data));
    assert.doesNotMatch(run.stdout, /whsec_/);
  });

  it("a URL on a private network is refused by the server and nothing changes (SPEC 2.1)", async () => {
    const created = await registerDirectly(fixture, { url });
    const run = await svc([
      "webhooks",
      "update",
      created.id,
      "--url",
      "https://loopback.example.test/",
    ]);
    assertExit(run, 3);
    assert.match(run.stderr, /\(url_not_public\)$/m);
    assert.equal((await fetchDestination(created.id)).url, url);
  });

  it("another workspace's destination cannot be updated: exit 5, and it is untouched (SPEC 1.3)", async () => {
    const other = await createWorkspace(fixture.server);
    const theirs = await registerDirectly(fixture, { url }, other);
    const run = await svc(["webhooks", "update", theirs.id, "--active", "false"]);
    assertExit(run, 5);
    assert.match(run.stderr, /\(not_found\)/);
    const still = await apiClient(fixture.server.url, other.key).get<DestinationJson>(
      `/v1/workspaces/${other.id}/webhooks/${theirs.id}`,
    );
    assert.equal(still.body.active, true);
  });

  it("a deleted destination cannot be updated or retrieved (SPEC 3.1)", async () => {
    const created = await registerDirectly(fixture, { url });
    assertExit(await svc(["webhooks", "delete", created.id, "--yes"]), 0);
    const update = await svc(["webhooks", "update", created.id, "--active", "true"]);
    assertExit(update, 5);
    const get = await svc(["webhooks", "get", created.id]);
    assertExit(get, 5);
  });
});
