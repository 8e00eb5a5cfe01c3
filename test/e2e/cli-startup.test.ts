import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runProcess } from "../support/process.ts";
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

describe("svc loads only what the command it runs needs (issue 33)", () => {
  let dir: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    dir = await tempDir();
  });
  after(() => dir.cleanup());

  async function modulesLoadedBy(args: readonly string[]): Promise<string[]> {
    const log = join(dir.path, `loaded-${args.join("-")}.txt`);
    const run = await runProcess(process.execPath, ["--import", moduleRecorder, svcBin, ...args], {
      env: {
        PATH: process.env.PATH,
        XDG_CONFIG_HOME: isolatedConfigHome,
        SERVICE_API_KEY: "svc_test_not_sent",
        SERVICE_WORKSPACE_ID: "ws_0b7c3d5e9f1a2b4c6d8e0f12",
        SVC_TEST_MODULE_LOG: log,
      },
    });
    assert.equal(run.code, 0, run.stderr);
    return (await readFile(log, "utf8")).split("\n");
  }

  it("svc --version loads no command, no package and no schema: svc.js and the version", async () => {
    const loaded = await modulesLoadedBy(["--version"]);
    assert.deepEqual(ownModules(loaded), ["bin/svc.js", "bin/node-version.js", "version.js"]);
    assert.deepEqual(packages(loaded), []);
  });

  it("svc webhooks --help declares the webhooks commands without loading their bodies or zod", async () => {
    const loaded = await modulesLoadedBy(["webhooks", "--help"]);
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
});
