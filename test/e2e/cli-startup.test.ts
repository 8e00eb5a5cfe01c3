import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { runProcess } from "../support/process.ts";
import { isolatedConfigHome, svcBin } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

/**
 * A module hook, loaded with `--import` before svc, that writes every module the process
 * loads (ES modules, CommonJS and built-ins alike) to the file named by SVC_TEST_LOADED.
 */
const recorder = `import { registerHooks } from "node:module";
import { writeFileSync } from "node:fs";
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on("exit", () => writeFileSync(process.env.SVC_TEST_LOADED, loaded.join("\\n")));
`;

/** The dist/src modules a run loaded, as paths below dist/src (`cli/webhooks/list.js`). */
function ownModules(loaded: readonly string[]): string[] {
  const root = pathToFileURL(join(svcBin, "..", "..") + sep).href;
  return loaded.filter((url) => url.startsWith(root)).map((url) => url.slice(root.length));
}

const packages = (loaded: readonly string[]): string[] =>
  loaded.filter((url) => url.includes("/node_modules/"));

describe("svc loads only what the command it runs needs (issue 33)", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let hook: string;

  before(async () => {
    dir = await tempDir();
    hook = join(dir.path, "record-loaded.mjs");
    await writeFile(hook, recorder);
  });
  after(() => dir.cleanup());

  async function modulesLoadedBy(args: readonly string[]): Promise<string[]> {
    const log = join(dir.path, `loaded-${args.join("-")}.txt`);
    const run = await runProcess(process.execPath, ["--import", hook, svcBin, ...args], {
      env: {
        PATH: process.env.PATH,
        XDG_CONFIG_HOME: isolatedConfigHome,
        SERVICE_API_KEY: "svc_test_not_sent",
        SERVICE_WORKSPACE_ID: "ws_0b7c3d5e9f1a2b4c6d8e0f12",
        SVC_TEST_LOADED: log,
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
