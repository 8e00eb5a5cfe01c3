import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runCliInMemory } from "../support/in-memory-cli.ts";
import { runProcess } from "../support/process.ts";
import { json, startStubApi, type StubApi } from "../support/stub-api.ts";
import { isolatedConfigHome, svcBin } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

/** Records every module a `svc` process resolves (decision 47's recorder), given `--import`. */
const moduleRecorder = fileURLToPath(new URL("../support/module-recorder.js", import.meta.url));

/** The dist/src modules a run loaded, as paths below dist/src (`cli/webhooks/list.js`). */
function ownModules(loaded: readonly string[]): string[] {
  const root = pathToFileURL(join(svcBin, "..", "..") + sep).href;
  return loaded.filter((url) => url.startsWith(root)).map((url) => url.slice(root.length));
}

const packages = (loaded: readonly string[]): string[] =>
  loaded.filter((url) => url.includes("/node_modules/"));

const WORKSPACE = "ws_0b7c3d5e9f1a2b4c6d8e0f12";

const destination = {
  id: "dst_5f0c2a9e81b34d7c6a1e0f93",
  url: "https://example.com/hooks",
  events: ["job.completed"],
  active: true,
  created_at: "2026-11-25T10:00:00.000Z",
  updated_at: "2026-11-25T10:00:00.000Z",
};

/** zod and the contract's schema modules: what a command that only reads answers never needs. */
const schemaModules = (loaded: readonly string[]): string[] => [
  ...packages(loaded).filter((url) => url.includes("/node_modules/zod/")),
  ...ownModules(loaded).filter((path) => path.startsWith("contract/")),
];

describe("svc loads only what the command it runs needs (issue 33)", () => {
  let dir: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    dir = await tempDir();
  });
  after(() => dir.cleanup());

  /** The modules `svc <args>` loaded, and its output; `env` adds to or unsets the default one. */
  async function loadedBy(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
    const log = join(dir.path, `loaded-${args.join("-")}.txt`);
    const run = await runProcess(process.execPath, ["--import", moduleRecorder, svcBin, ...args], {
      env: {
        PATH: process.env.PATH,
        XDG_CONFIG_HOME: isolatedConfigHome,
        SERVICE_API_KEY: "svc_test_not_sent",
        SERVICE_WORKSPACE_ID: WORKSPACE,
        SVC_TEST_MODULE_LOG: log,
        ...env,
      },
    });
    return { run, loaded: (await readFile(log, "utf8")).split("\n") };
  }

  async function modulesLoadedBy(args: readonly string[]): Promise<string[]> {
    const { run, loaded } = await loadedBy(args);
    assert.equal(run.code, 0, run.stderr);
    return loaded;
  }

  it("svc --version loads no command, no package and no schema: svc.js and the version", async () => {
    const loaded = await modulesLoadedBy(["--version"]);
    assert.deepEqual(ownModules(loaded), ["bin/svc.js", "bin/node-version.js", "version.js"]);
    assert.deepEqual(packages(loaded), []);
  });

  it("svc webhooks --help prints the build's text: no command, no package", async () => {
    const { run, loaded } = await loadedBy(["webhooks", "--help"]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(ownModules(loaded), [
      "bin/svc.js",
      "bin/node-version.js",
      "cli/prerendered-help.js",
    ]);
    assert.deepEqual(packages(loaded), []);
    const inProcess = await runCliInMemory(["webhooks", "--help"], { env: {} });
    assert.equal(run.stdout, inProcess.stdout);
  });

  it("svc --no-pager webhooks --help (commander's help) declares the webhooks commands without loading their bodies or zod", async () => {
    const loaded = await modulesLoadedBy(["--no-pager", "webhooks", "--help"]);
    const own = ownModules(loaded);
    assert.ok(own.includes("cli/webhooks/webhooks-commands.js"), own.join("\n"));
    const bodies = own.filter(
      (path) =>
        /^cli\/(webhooks|events|deliveries|auth|admin|listen|workspaces|keys|portal)\//.test(
          path,
        ) && path !== "cli/webhooks/webhooks-commands.js",
    );
    assert.deepEqual(bodies, [], "no command body, no other group");
    assert.deepEqual(
      own.filter((path) =>
        /^(contract|store|api|delivery|runtime|config)\/|^cli\/client\/session/.test(path),
      ),
      [],
    );
    assert.deepEqual(
      packages(loaded).filter((url) => !url.includes("/node_modules/commander/")),
      [],
      "commander alone",
    );
  });

  it("svc webhooks list loads its own body, not another command's, the store or the server", async () => {
    const own = ownModules(await modulesLoadedBy(["webhooks", "list", "--dry-run"]));
    assert.ok(own.includes("cli/webhooks/list.js"), own.join("\n"));
    for (const other of ["create", "get", "update", "delete"]) {
      assert.ok(!own.includes(`cli/webhooks/${other}.js`), other);
    }
    assert.deepEqual(
      own.filter((path) => /^(store|api|delivery|runtime)\/|^cli\/admin\//.test(path)),
      [],
    );
  });

  describe("a command that reads answers checks them without zod (issue 33)", () => {
    let stub: StubApi;

    before(async () => {
      stub = await startStubApi();
    });
    after(() => stub.close());

    it("svc webhooks list with an API key loads no zod and no contract schema", async () => {
      stub.answer(json(200, { data: [destination], next_cursor: null }));
      const { run, loaded } = await loadedBy(["webhooks", "list", "--json"], {
        SERVICE_API_URL: stub.url,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { ok: true, data: [destination] });
      assert.deepEqual(schemaModules(loaded), []);
    });

    it("svc webhooks list with saved credentials loads no zod and no contract schema", async () => {
      const configHome = join(dir.path, "signed-in");
      await mkdir(join(configHome, "svc"), { recursive: true });
      const saved = {
        api_url: stub.url,
        kind: "session",
        token: "svs_test_saved",
        user: { id: "usr_1", email: "ada@example.com" },
        workspaces: [{ id: WORKSPACE, name: "One", role: "owner", scopes: ["webhooks:read"] }],
        expires_at: "2099-01-01T00:00:00.000Z",
        saved_at: "2026-11-25T10:00:00.000Z",
      };
      await writeFile(join(configHome, "svc", "credentials.json"), JSON.stringify(saved));
      stub.answer(json(200, { data: [destination], next_cursor: null }));
      const { run, loaded } = await loadedBy(["webhooks", "list", "--json"], {
        XDG_CONFIG_HOME: configHome,
        SERVICE_API_KEY: undefined,
        SERVICE_WORKSPACE_ID: undefined,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { ok: true, data: [destination] });
      assert.equal(stub.received.at(-1)?.headers.authorization, "Bearer svs_test_saved");
      assert.deepEqual(schemaModules(loaded), []);
    });

    it("svc webhooks and events commands that read answers load no zod and no contract schema", async () => {
      const circuit = { state: "closed", open_until: null, opens: 0, reason: null };
      const event = {
        id: "evt_1",
        type: "job.completed",
        api_version: "2026-11-01",
        created: 1795273492,
        test: false,
      };
      const runs = [
        {
          args: ["webhooks", "get", destination.id],
          answer: { ...destination, last_delivery: null, circuit },
        },
        { args: ["webhooks", "update", destination.id, "--active", "false"], answer: destination },
        {
          args: ["webhooks", "delete", destination.id, "--yes"],
          answer: { id: "x", deleted: true },
        },
        {
          args: ["events", "list", "--since", "2026-11-25T09:00:00Z", "--until", "1h"],
          answer: { data: [event], next_cursor: null },
        },
        {
          args: ["events", "get", event.id],
          answer: { ...event, data: { object: { id: "job_42" } }, deliveries: [] },
        },
      ];
      for (const { args, answer } of runs) {
        stub.answer(json(200, answer));
        const { run, loaded } = await loadedBy([...args, "--json"], { SERVICE_API_URL: stub.url });
        assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
        assert.deepEqual(schemaModules(loaded), [], args.join(" "));
      }
    });

    it("svc webhooks list with an API key and no workspace asks who it is without zod", async () => {
      const workspaces = [{ id: WORKSPACE, name: "One", role: null, scopes: ["webhooks:read"] }];
      stub.answer((request, response) => {
        const answer = request.url.endsWith("/v1/auth/session")
          ? { kind: "api_key", key_id: "key_1", user: null, workspaces }
          : { data: [destination], next_cursor: null };
        json(200, answer)(request, response);
      });
      const { run, loaded } = await loadedBy(["webhooks", "list", "--json"], {
        SERVICE_API_URL: stub.url,
        SERVICE_WORKSPACE_ID: undefined,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(stub.received.at(-1)?.url, `/v1/workspaces/${WORKSPACE}/webhooks`);
      assert.deepEqual(schemaModules(loaded), []);
    });

    it("an answer of the wrong shape loads the contract's schema, which names what is wrong", async () => {
      stub.answer(json(200, { data: [{ ...destination, active: "yes" }], next_cursor: null }));
      const { run, loaded } = await loadedBy(["webhooks", "list"], { SERVICE_API_URL: stub.url });
      assert.equal(run.code, 1);
      assert.equal(
        run.stderr,
        "error: The API answered HTTP 200 with an unexpected body (data.0.active: Invalid input: expected boolean, received string). Are svc and the server the same version? (bad_response)\n",
      );
      assert.ok(ownModules(loaded).includes("contract/destinations.js"));
    });
  });
});
