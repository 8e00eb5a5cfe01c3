import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { assertExit, envelope, registerDirectly, svcAgainst } from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createWorkspace } from "../support/server.ts";
import type { SvcRun, SvcRunOptions } from "../support/svc.ts";

type Registered = DestinationJson & { secret: string };

const closedCircuit = { state: "closed", open_until: null, opens: 0, reason: null };

describe("svc webhooks list and get", () => {
  let fixture: ServerFixture;
  let svc: (args: readonly string[], options?: SvcRunOptions) => Promise<SvcRun>;
  let first: Registered;
  let second: Registered;

  before(async () => {
    fixture = await serverFixture();
    svc = svcAgainst(fixture);
    first = await registerDirectly(fixture, {
      url: "https://public.example.test/first",
      events: ["job.completed", "job.failed"],
    });
    second = await registerDirectly(fixture, { url: "https://public6.example.test/second" });
  });
  after(() => fixture.dispose());

  it("list prints a table of id, url, events, active and both timestamps, newest first (SPEC 4.2)", async () => {
    const run = await svc(["webhooks", "list"]);
    assertExit(run, 0);
    const [header, ...rows] = run.stdout.trimEnd().split("\n");
    assert.deepEqual(header?.split(/\s+/), [
      "ID",
      "URL",
      "EVENTS",
      "ACTIVE",
      "CREATED_AT",
      "UPDATED_AT",
    ]);
    assert.deepEqual(
      rows.map((row) => row.split(/\s+/)),
      [second, first].map((item) => [
        item.id,
        item.url,
        item.events.join(","),
        String(item.active),
        item.created_at,
        item.updated_at,
      ]),
    );
    assert.equal(run.stderr, "", "one page holds them all: no hint");
    const json = envelope<Record<string, unknown>[]>(await svc(["webhooks", "list", "--json"]));
    for (const item of json.data) {
      assert.deepEqual(Object.keys(item), [
        "id",
        "url",
        "events",
        "active",
        "created_at",
        "updated_at",
      ]);
    }
  });

  it("get prints the configuration and last_delivery as key: value lines (SPEC 4.4, 2.2)", async () => {
    const run = await svc(["webhooks", "get", first.id]);
    assertExit(run, 0);
    // A member that is an object (the circuit) is its key alone, its members indented below.
    let parent = "";
    const lines = Object.fromEntries(
      run.stdout
        .trimEnd()
        .split("\n")
        .flatMap((line): [string, string][] => {
          const [, indent, key, value] = /^( *)(\w+):(?: +(.*))?$/.exec(line)!;
          if (indent === "" && value === undefined) {
            parent = `${key}.`;
            return [];
          }
          return [[indent === "" ? key! : `${parent}${key}`, value ?? ""]];
        }),
    );
    assert.deepEqual(lines, {
      id: first.id,
      url: first.url,
      events: "job.completed,job.failed",
      active: "true",
      created_at: first.created_at,
      updated_at: first.updated_at,
      last_delivery: "none",
      "circuit.state": "closed",
      "circuit.open_until": "none",
      "circuit.opens": "0",
      "circuit.reason": "none",
    });
  });

  it("get --json gives the destination and last_delivery null until a delivery is recorded", async () => {
    const run = await svc(["webhooks", "get", first.id, "--json"]);
    assertExit(run, 0);
    const { secret, ...withoutSecret } = first;
    assert.ok(secret.startsWith("whsec_"));
    assert.deepEqual(envelope(run), {
      ok: true,
      data: { ...withoutSecret, last_delivery: null, circuit: closedCircuit },
    });
  });

  it("list and get never print the signing secret, in any output format (SPEC 1.6)", async () => {
    const formats = [
      [],
      ["--format", "table"],
      ["--json"],
      ["--format", "json", "--pretty"],
      ["--format", "yaml"],
      ["--raw"],
      ["--fields", "id,url,events,active,created_at,updated_at"],
      ...["id", "url", "events", "active", "created_at", "updated_at"].map((name) => [
        "--field",
        name,
      ]),
    ];
    const commands = formats.flatMap((format) => [
      ["webhooks", "list", ...format],
      ["webhooks", "get", first.id, ...format],
    ]);
    const runs = await Promise.all(commands.map((command) => svc(command)));
    runs.forEach((run, index) => {
      const command = commands[index]!.join(" ");
      assertExit(run, 0);
      const printed = run.stdout + run.stderr;
      assert.ok(!printed.includes(first.secret), `${command} printed the secret`);
      assert.doesNotMatch(printed, /whsec_/, command);
    });
    for (const command of [
      ["webhooks", "get", first.id, "--field", "secret"],
      ["webhooks", "list", "--fields", "id,secret"],
    ]) {
      const run = await svc(command);
      assertExit(run, 2);
      assert.match(run.stderr, /no member "secret"/);
    }
  });

  it("--format json and --json print one envelope whose data is the list", async () => {
    for (const flags of [["--json"], ["--format", "json"], ["--format=json"]]) {
      const run = await svc(["webhooks", "list", ...flags]);
      assertExit(run, 0);
      const document = envelope<DestinationJson[]>(run);
      assert.equal(document.ok, true);
      assert.deepEqual(
        document.data.map((item) => item.id),
        [second.id, first.id],
      );
      assert.equal(run.stdout.trimEnd().split("\n").length, 1, "compact: one line");
    }
    const pretty = await svc(["webhooks", "list", "--pretty"]);
    assertExit(pretty, 0);
    assert.match(pretty.stdout, /^\{\n {2}"ok": true,\n {2}"data": \[/);
    assert.deepEqual(
      JSON.parse(pretty.stdout),
      JSON.parse((await svc(["webhooks", "list", "--json"])).stdout),
    );
  });

  it("--field prints the bare value: a string as is, other values as JSON, one line per item", async () => {
    const ids = await svc(["webhooks", "list", "--field", "id"]);
    assertExit(ids, 0);
    assert.equal(ids.stdout, `${second.id}\n${first.id}\n`);
    const url = await svc(["webhooks", "get", first.id, "--field", "url"]);
    assert.equal(url.stdout, `${first.url}\n`);
    const events = await svc(["webhooks", "get", first.id, "--field", "events"]);
    assert.deepEqual(JSON.parse(events.stdout), ["job.completed", "job.failed"]);
    const active = await svc(["webhooks", "get", first.id, "--field", "active"]);
    assert.equal(active.stdout, "true\n");
    const delivery = await svc(["webhooks", "get", first.id, "--field", "last_delivery"]);
    assert.equal(delivery.stdout, "null\n");
  });

  it("--fields selects table columns and JSON or YAML members, in the order given", async () => {
    const table = await svc(["webhooks", "list", "--fields", "url,id"]);
    assertExit(table, 0);
    assert.deepEqual(
      table.stdout
        .trimEnd()
        .split("\n")
        .map((line) => line.split(/\s+/)),
      [
        ["URL", "ID"],
        [second.url, second.id],
        [first.url, first.id],
      ],
    );
    const json = await svc(["webhooks", "get", first.id, "--fields", "active,id", "--json"]);
    assert.equal(json.stdout, `{"ok":true,"data":{"active":true,"id":"${first.id}"}}\n`);
    const yaml = await svc([
      "webhooks",
      "get",
      first.id,
      "--fields",
      "id,events",
      "--format",
      "yaml",
    ]);
    assert.equal(yaml.stdout, `id: ${first.id}\nevents:\n  - job.completed\n  - job.failed\n`);
    const human = await svc(["webhooks", "get", first.id, "--fields", "id,active"]);
    assert.equal(human.stdout, `id:     ${first.id}\nactive: true\n`);
  });

  it("--format yaml prints every member, quoting what YAML would read as something else", async () => {
    const run = await svc(["webhooks", "get", second.id, "--format", "yaml"]);
    assertExit(run, 0);
    assert.equal(
      run.stdout,
      [
        `id: ${second.id}`,
        `url: "${second.url}"`,
        "events:",
        '  - "*"',
        "active: true",
        `created_at: "${second.created_at}"`,
        `updated_at: "${second.updated_at}"`,
        "last_delivery: null",
        "circuit:",
        "  state: closed",
        "  open_until: null",
        "  opens: 0",
        "  reason: null",
        "",
      ].join("\n"),
    );
  });

  it("--raw prints the API's response body exactly as received", async () => {
    const api = apiClient(fixture.server.url, fixture.owner.key);
    const base = `/v1/workspaces/${fixture.owner.id}/webhooks`;
    const get = await svc(["webhooks", "get", first.id, "--raw"]);
    assertExit(get, 0);
    assert.equal(get.stdout, `${(await api.get(`${base}/${first.id}`)).text}\n`);
    const list = await svc(["webhooks", "list", "--raw"]);
    assert.equal(list.stdout, `${(await api.get(base)).text}\n`);
    assert.equal((JSON.parse(list.stdout) as { next_cursor: unknown }).next_cursor, null);
  });

  it("a destination of another workspace cannot be retrieved: exit 5, not_found (SPEC 1.3)", async () => {
    const other = await createWorkspace(fixture.server);
    const theirs = await registerDirectly(
      fixture,
      { url: "https://public.example.test/theirs" },
      other,
    );
    const run = await svc(["webhooks", "get", theirs.id]);
    assertExit(run, 5);
    assert.match(
      run.stderr,
      /^error: No webhook destination dst_\w+ in this workspace\. \(not_found\)\n$/,
    );
    const listed = await svc(["webhooks", "list", "--field", "id"]);
    assert.ok(!listed.stdout.includes(theirs.id));
  });

  it("an unknown id is not_found, exit 5, with the --json envelope carrying the HTTP status", async () => {
    const run = await svc(["webhooks", "get", "dst_000000000000000000000000", "--json"]);
    assertExit(run, 5);
    assert.deepEqual(envelope(run).error, {
      code: "not_found",
      message: "No webhook destination dst_000000000000000000000000 in this workspace.",
      status: 404,
    });
    assert.equal(run.stderr, "");
  });
});
