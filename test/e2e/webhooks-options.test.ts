import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { DestinationJson } from "../support/api.ts";
import {
  assertExit,
  clientEnv,
  closedPortUrl,
  envelope,
  listedDestinations,
  registerDirectly,
  svcAgainst,
} from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createKey, createWorkspace, type Workspace } from "../support/server.ts";
import { runSvc, type SvcRun, type SvcRunOptions } from "../support/svc.ts";

const url = "https://public.example.test/hooks";
/** Begins every colour and style sequence. */
const ESCAPE = String.fromCharCode(27);

interface DryRun {
  dry_run: true;
  request: {
    method: string;
    url: string;
    headers: Record<string, string>;
    body: Record<string, unknown> | null;
  };
}

describe("svc webhooks: global options", () => {
  let fixture: ServerFixture;
  let svc: (args: readonly string[], options?: SvcRunOptions) => Promise<SvcRun>;
  let existing: DestinationJson;

  before(async () => {
    fixture = await serverFixture();
    svc = svcAgainst(fixture);
    existing = await registerDirectly(fixture, { url });
  });
  after(() => fixture.dispose());

  describe("--workspace and SERVICE_WORKSPACE_ID (SPEC 4.1)", () => {
    it("SERVICE_WORKSPACE_ID selects the workspace", async () => {
      const run = await svc(["webhooks", "list", "--field", "id"]);
      assertExit(run, 0);
      assert.match(run.stdout, new RegExp(existing.id));
    });

    it("--workspace wins over SERVICE_WORKSPACE_ID", async () => {
      const run = await svc(
        ["webhooks", "list", "--workspace", fixture.owner.id, "--field", "id"],
        {
          env: { SERVICE_WORKSPACE_ID: "ws_elsewhere" },
        },
      );
      assertExit(run, 0);
      assert.match(run.stdout, new RegExp(existing.id));
    });

    it("another workspace id adds no permission: 403 workspace_forbidden, exit 4 (SPEC 5.2)", async () => {
      const other = await createWorkspace(fixture.server);
      const run = await svc(["webhooks", "list", "--workspace", other.id]);
      assertExit(run, 4);
      assert.match(
        run.stderr,
        new RegExp(`no access to workspace ${other.id}.*\\(workspace_forbidden\\)`),
      );
    });

    it("without either, the key's only workspace is used, as the API names it (CONTRACT Processes)", async () => {
      const run = await svc(["webhooks", "list"], { env: { SERVICE_WORKSPACE_ID: "" } });
      assertExit(run, 0);
      assert.match(run.stdout, new RegExp(existing.id));
    });

    it("without either, --dry-run is no_workspace, exit 2, before any request", async () => {
      const run = await svc(["webhooks", "list", "--dry-run"], {
        env: { SERVICE_WORKSPACE_ID: "", SERVICE_API_URL: await closedPortUrl() },
      });
      assertExit(run, 2);
      assert.match(
        run.stderr,
        /Pass --workspace <id> or set SERVICE_WORKSPACE_ID.*\(no_workspace\)/,
      );
    });
  });

  describe("credentials and the API address (CONTRACT Processes)", () => {
    it("without SERVICE_API_KEY it is no_credentials, exit 4, before any request", async () => {
      const run = await svc(["webhooks", "list"], {
        env: { SERVICE_API_KEY: "", SERVICE_API_URL: await closedPortUrl() },
      });
      assertExit(run, 4);
      assert.match(run.stderr, /Set SERVICE_API_KEY.*\(no_credentials\)/);
    });

    it("a key the API does not know is unauthenticated, exit 4", async () => {
      const run = await svc(["webhooks", "list", "--json"], {
        env: { SERVICE_API_KEY: "svc_unknown" },
      });
      assertExit(run, 4);
      assert.deepEqual(
        { code: envelope(run).error.code, status: envelope(run).error.status },
        { code: "unauthenticated", status: 401 },
      );
    });

    it("a read-only key lists and gets, but cannot create, update or delete: exit 4 (SPEC 5.3)", async () => {
      const reader = await createKey(fixture.server, fixture.owner.id, "webhooks:read");
      const env = { SERVICE_API_KEY: reader };
      assertExit(await svc(["webhooks", "list"], { env }), 0);
      assertExit(await svc(["webhooks", "get", existing.id], { env }), 0);
      const output = join(fixture.dir, "reader-secret.txt");
      for (const command of [
        ["webhooks", "create", "--url", url, "--output", output],
        ["webhooks", "update", existing.id, "--active", "false"],
        ["webhooks", "delete", existing.id, "--yes"],
      ]) {
        const run = await svc(command, { env });
        assertExit(run, 4);
        assert.match(run.stderr, /needs the webhooks:write scope\. \(insufficient_scope\)/);
      }
      await assert.rejects(stat(output), { code: "ENOENT" }, "the refused create leaves no file");
      const after = await listedDestinations(fixture);
      assert.equal(after.find((item) => item.id === existing.id)?.active, true);
    });

    it("a server that is down is api_unreachable, exit 6, naming the API's URL", async () => {
      const nowhere = await closedPortUrl();
      const run = await svc(["webhooks", "list"], { env: { SERVICE_API_URL: nowhere } });
      assertExit(run, 6);
      assert.match(
        run.stderr,
        new RegExp(
          `^error: Could not reach the API at ${nowhere} \\(ECONNREFUSED\\)\\. .*SERVICE_API_URL.*\\(api_unreachable\\)\\n$`,
        ),
      );
    });

    it("SERVICE_API_URL that is not an http(s) URL is refused, exit 2", async () => {
      const run = await svc(["webhooks", "list"], { env: { SERVICE_API_URL: "localhost:8787" } });
      assertExit(run, 2);
      assert.match(run.stderr, /SERVICE_API_URL must be an http:\/\/ or https:\/\/ URL/);
    });
  });

  describe("--dry-run (SPEC 4.1)", () => {
    it("create, update, delete and list send nothing: the server's state is unchanged", async () => {
      const before = await listedDestinations(fixture);
      const output = join(fixture.dir, "dry-run-secret.txt");
      for (const command of [
        ["webhooks", "create", "--url", url, "--output", output],
        ["webhooks", "update", existing.id, "--active", "false"],
        ["webhooks", "delete", existing.id],
        ["webhooks", "list", "--page-all"],
      ]) {
        const run = await svc([...command, "--dry-run"]);
        assertExit(run, 0);
        assert.match(run.stderr, /^Dry run: nothing was sent\./m);
      }
      assert.deepEqual(await listedDestinations(fixture), before);
      await assert.rejects(stat(output), { code: "ENOENT" }, "no secret file either");
    });

    it("prints the request: method, URL, headers with the credentials redacted, and the body", async () => {
      const run = await svc([
        "webhooks",
        "create",
        "--url",
        url,
        "--events",
        "job.failed",
        "--idempotency-key",
        "retry-7",
        "--output",
        join(fixture.dir, "never.txt"),
        "--dry-run",
      ]);
      assertExit(run, 0);
      const [requestLine, ...rest] = run.stdout.trimEnd().split("\n");
      assert.equal(
        requestLine,
        `POST ${fixture.server.url}/v1/workspaces/${fixture.owner.id}/webhooks`,
      );
      assert.ok(rest.includes("Authorization: Bearer [redacted]"));
      assert.ok(rest.includes("Content-Type: application/json"));
      assert.ok(rest.includes("Idempotency-Key: retry-7"));
      assert.equal(rest.at(-1), JSON.stringify({ url, events: ["job.failed"] }));
      assert.ok(!run.stdout.includes(fixture.owner.key) && !run.stderr.includes(fixture.owner.key));
      assert.match(run.stderr, /secret would be saved to .*never\.txt/);
    });

    it("--json gives the request as data, with the credentials redacted", async () => {
      const run = await svc([
        "webhooks",
        "update",
        existing.id,
        "--active",
        "false",
        "--dry-run",
        "--json",
      ]);
      assertExit(run, 0);
      const { data } = envelope<DryRun>(run);
      assert.equal(data.dry_run, true);
      assert.equal(data.request.method, "PATCH");
      assert.equal(
        data.request.url,
        `${fixture.server.url}/v1/workspaces/${fixture.owner.id}/webhooks/${existing.id}`,
      );
      assert.equal(data.request.headers.Authorization, "Bearer [redacted]");
      assert.deepEqual(data.request.body, { active: false });
      assert.ok(!run.stdout.includes(fixture.owner.key));
    });

    it("still checks what the command line can: a bad --output path fails, without creating it", async () => {
      const existingFile = join(fixture.dir, "taken.txt");
      await writeFile(existingFile, "taken");
      const run = await svc([
        "webhooks",
        "create",
        "--url",
        url,
        "--output",
        existingFile,
        "--dry-run",
      ]);
      assertExit(run, 2);
      assert.match(run.stderr, /\(output_exists\)/);
      assert.equal(await readFile(existingFile, "utf8"), "taken");
    });
  });

  describe("--page-all (SPEC 4.2)", () => {
    let paged: Workspace;
    let ids: string[];

    before(async () => {
      paged = await createWorkspace(fixture.server);
      ids = [];
      for (let index = 0; index < 205; index += 1) {
        ids.push((await registerDirectly(fixture, { url: `${url}/${index}` }, paged)).id);
      }
      ids.reverse(); // newest first
    });

    const inPaged = (args: readonly string[]) => runSvc(args, { env: clientEnv(fixture, paged) });

    it("follows every page: all 205 destinations, in order, over 3 requests", async () => {
      const run = await inPaged(["webhooks", "list", "--page-all", "--json", "--timing"]);
      assertExit(run, 0);
      assert.deepEqual(
        envelope<DestinationJson[]>(run).data.map((item) => item.id),
        ids,
      );
      const requests = run.stderr.split("\n").filter((line) => line.startsWith("timing: GET "));
      assert.equal(requests.length, 3, run.stderr);
    });

    it("without it: the first page only, and a hint on stderr that more exist", async () => {
      const run = await inPaged(["webhooks", "list", "--field", "id"]);
      assertExit(run, 0);
      assert.deepEqual(run.stdout.trimEnd().split("\n"), ids.slice(0, 20));
      assert.match(run.stderr, /More destinations exist.*--page-all/);
    });

    it("with --raw: each page's body as received, one per line", async () => {
      const run = await inPaged(["webhooks", "list", "--page-all", "--raw"]);
      assertExit(run, 0);
      const pages = run.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as { data: DestinationJson[]; next_cursor: string | null });
      assert.equal(pages.length, 3);
      assert.equal(pages.at(-1)?.next_cursor, null);
      assert.deepEqual(
        pages.flatMap((page) => page.data.map((item) => item.id)),
        ids,
      );
    });
  });

  describe("--timing", () => {
    const timingLine = (method: string, url: string) =>
      `timing: ${method} ${url} 200 in \\d+\\.\\d ms \\((?:connect \\d+\\.\\d ms, )?headers after \\d+\\.\\d ms\\)(?:; svc's own start-up before it: \\d+\\.\\d ms)?\\n`;

    it("reports each request on stderr, from the moment it goes out, and leaves stdout as it was", async () => {
      const plain = await svc(["webhooks", "get", existing.id, "--json"]);
      const timed = await svc(["webhooks", "get", existing.id, "--json", "--timing"]);
      assertExit(timed, 0);
      assert.equal(timed.stdout, plain.stdout);
      const url = `${fixture.server.url}/v1/workspaces/${fixture.owner.id}/webhooks/${existing.id}`;
      assert.match(timed.stderr, new RegExp(`^${timingLine("GET", url)}$`));
      // A fresh process opens its connection: the time says so, apart from the answer's.
      assert.match(timed.stderr, / \(connect \d+\.\d ms, headers after/);
    });

    it("shows every request the command makes, the lookup of the key's workspace included", async () => {
      const timed = await svc(["webhooks", "get", existing.id, "--json", "--timing"], {
        env: { SERVICE_WORKSPACE_ID: "" },
      });
      assertExit(timed, 0);
      const url = `${fixture.server.url}/v1/workspaces/${fixture.owner.id}/webhooks/${existing.id}`;
      assert.match(
        timed.stderr,
        new RegExp(
          `^${timingLine("GET", `${fixture.server.url}/v1/auth/session`)}${timingLine("GET", url)}$`,
        ),
      );
    });
  });

  describe("--output for commands that issue no secret", () => {
    it("writes the printed result to a new 0600 file instead of stdout", async () => {
      const output = join(fixture.dir, "listed.json");
      const run = await svc(["webhooks", "get", existing.id, "--json", "--output", output]);
      assertExit(run, 0);
      assert.equal(run.stdout, "");
      assert.match(run.stderr, /Wrote the result to .*listed\.json/);
      assert.equal((await stat(output)).mode & 0o777, 0o600);
      assert.equal(
        (JSON.parse(await readFile(output, "utf8")) as { data: { id: string } }).data.id,
        existing.id,
      );
    });

    it("refuses an existing file before sending anything", async () => {
      const output = join(fixture.dir, "exists.txt");
      await writeFile(output, "keep");
      const run = await svc(["webhooks", "list", "--output", output], {
        env: { SERVICE_API_URL: await closedPortUrl() },
      });
      assertExit(run, 2);
      assert.match(run.stderr, /\(output_exists\)/);
      assert.equal(await readFile(output, "utf8"), "keep");
    });
  });

  describe("the command line itself", () => {
    it("global options work before the group too", async () => {
      const run = await svc(["--json", "webhooks", "get", existing.id]);
      assertExit(run, 0);
      assert.equal(envelope<DestinationJson>(run).data.id, existing.id);
    });

    it("an unknown flag is a usage error, exit 2, one line pointing at the command's --help", async () => {
      const run = await svc(["webhooks", "list", "--colour"]);
      assertExit(run, 2);
      assert.equal(
        run.stderr,
        "error: unknown option '--colour'. See `svc webhooks list --help`. (usage_error)\n",
      );
      const typo = await svc(["webhooks", "lst"]);
      assertExit(typo, 2);
      assert.equal(
        typo.stderr,
        "error: unknown command 'lst'; did you mean list? See `svc webhooks --help`. (usage_error)\n",
      );
      const json = await svc(["webhooks", "list", "--colour", "--json"]);
      assertExit(json, 2);
      assert.equal(json.stderr, "");
      assert.equal(envelope(json).error.code, "usage_error");
      assert.match(envelope(json).error.message, /unknown option '--colour'.*--help/);
    });

    it("an option the command does not act on is refused, not ignored", async () => {
      for (const [command, flag] of [
        [["webhooks", "get", existing.id], "--page-all"],
        [["webhooks", "list"], "--stdin"],
        [["webhooks", "list"], "--yes"],
        [["admin", "init", "--output", join(fixture.dir, "k")], "--dry-run"],
      ] as const) {
        const run = await svc([...command, flag]);
        assertExit(run, 2);
        assert.match(run.stderr, new RegExp(`does not take ${flag}`));
      }
    });

    it("output options that cannot both be honoured are refused", async () => {
      for (const flags of [
        ["--raw", "--json"],
        ["--field", "id", "--fields", "id,url"],
        ["--field", "id", "--format", "yaml"],
        ["--json", "--format", "table"],
        ["--pretty", "--format", "yaml"],
      ]) {
        const run = await svc(["webhooks", "list", ...flags]);
        assertExit(run, 2);
        assert.match(run.stdout + run.stderr, /usage_error|cannot be combined|choose one/);
      }
    });

    it("output that is not a terminal carries no colour codes", async () => {
      const list = await svc(["webhooks", "list"]);
      const error = await svc(["webhooks", "get", "dst_nope"]);
      assert.ok(!(list.stdout + error.stderr).includes(ESCAPE));
    });

    it("--help of the group lists exactly the five subcommands, with examples (SPEC 1.2)", async () => {
      const run = await runSvc(["webhooks", "--help"]);
      assertExit(run, 0);
      const commands = run.stdout
        .split("Commands:\n")[1]!
        .split("\n\n")[0]!
        .split("\n")
        .map((line) => /^ {2}(\w+)/.exec(line)?.[1])
        .filter((name) => name !== undefined);
      assert.deepEqual(commands, ["list", "create", "get", "update", "delete"]);
      const examples = run.stdout.split("Examples:\n")[1] ?? "";
      for (const command of commands)
        assert.match(examples, new RegExp(`\\$ svc webhooks ${command}\\b`));
    });

    it("--help of each subcommand has its examples and the global options it takes, and no others", async () => {
      const everyOne = ["--workspace", "--json", "--pretty", "--format", "--no-pager", "--raw"];
      const taken: Record<string, string[]> = {
        list: ["--field ", "--fields", "--output", "--dry-run", "--page-all", "--timing"],
        create: [
          "--field ",
          "--fields",
          "--output",
          "--dry-run",
          "--stdin",
          "--from-stdin",
          "--timing",
        ],
        get: ["--field ", "--fields", "--output", "--dry-run", "--timing"],
        update: [
          "--field ",
          "--fields",
          "--output",
          "--dry-run",
          "--stdin",
          "--from-stdin",
          "--timing",
        ],
        delete: ["--field ", "--fields", "--output", "--dry-run", "--yes", "--timing"],
      };
      const all = [...new Set(Object.values(taken).flat())];
      for (const [command, flags] of Object.entries(taken)) {
        const run = await runSvc(["webhooks", command, "--help"]);
        assertExit(run, 0);
        assert.match(run.stdout, new RegExp(`Examples:\\n {2}\\$ svc webhooks ${command}`));
        const global = run.stdout.slice(run.stdout.indexOf("Global Options ("));
        for (const flag of [...everyOne, ...flags]) {
          assert.ok(global.includes(flag), `${command} --help lacks ${flag}`);
        }
        for (const flag of all.filter((flag) => !flags.includes(flag))) {
          assert.ok(!global.includes(flag), `${command} --help lists ${flag}, which it refuses`);
        }
      }
    });
  });
});
