import assert from "node:assert/strict";
import { copyFile, mkdir, readFile, utimes, writeFile } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { sqlitePassOnly } from "../support/backend.ts";
import { runProcess, type ProcessRun } from "../support/process.ts";
import { tempDir } from "../support/temp.ts";

/** The script `npm start` runs first (prestart), in the repository, not dist/. */
const script = fileURLToPath(new URL("../../../scripts/build-if-stale.js", import.meta.url));

/**
 * `npm start` on a fresh clone builds by itself: the prestart script, run in a tree of its own
 * whose `npm run build` is a stand-in that writes the two outputs and counts its runs.
 */
describe(
  "npm start's prestart: build when dist/ is missing or stale",
  { skip: sqlitePassOnly },
  () => {
    let dir: Awaited<ReturnType<typeof tempDir>>;
    const source = (): string => join(dir.path, "src", "main.ts");
    const builds = async (): Promise<number> =>
      Number(await readFile(join(dir.path, "builds"), "utf8").catch(() => "0"));
    const prestart = (): Promise<ProcessRun> =>
      runProcess(process.execPath, [join(dir.path, "scripts", "build-if-stale.js")], {
        env: { PATH: [join(dir.path, "bin"), dirname(process.execPath)].join(delimiter) },
        cwd: dir.path,
      });

    before(async () => {
      dir = await tempDir();
      await mkdir(join(dir.path, "scripts"));
      await mkdir(join(dir.path, "src"));
      await mkdir(join(dir.path, "bin"));
      await copyFile(script, join(dir.path, "scripts", "build-if-stale.js"));
      await writeFile(join(dir.path, "package.json"), '{"type":"module"}');
      await writeFile(source(), "export {};\n");
      // `npm run build`, as the script calls it when no npm runs it (no npm_execpath).
      await writeFile(
        join(dir.path, "build.js"),
        `import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
       mkdirSync("dist/src/bin", { recursive: true }); mkdirSync("dist/ui", { recursive: true });
       writeFileSync("dist/src/bin/svc.js", ""); writeFileSync("dist/ui/index.html", "");
       let n = 0; try { n = Number(readFileSync("builds", "utf8")); } catch {}
       writeFileSync("builds", String(n + 1));`,
      );
      await writeFile(
        join(dir.path, "bin", "npm"),
        `#!/bin/sh\n[ "$1 $2" = "run build" ] && exec node build.js\nexit 64\n`,
        { mode: 0o755 },
      );
    });
    after(() => dir.cleanup());

    it("builds when dist/ is missing", async () => {
      const run = await prestart();
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /dist\/ is missing: building it/);
      assert.equal(await builds(), 1);
    });

    it("does nothing when dist/ is newer than every source", async () => {
      const run = await prestart();
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, "");
      assert.equal(await builds(), 1);
    });

    it("builds again when a source changed after the build", async () => {
      const later = new Date(Date.now() + 60_000);
      await utimes(source(), later, later);
      const run = await prestart();
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /dist\/ is older than the sources: building it/);
      assert.equal(await builds(), 2);
    });
  },
);
