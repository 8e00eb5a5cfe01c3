// `npm start`'s first step (the `prestart` script): builds dist/ when it is missing or older
// than a source, so that `npm install && npm start` works on a fresh clone and after a pull.
// Plain JavaScript, since it runs before anything is compiled. An up-to-date dist/ costs a
// walk of the source tree (a few hundred stat calls), not a build.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";

const root = join(import.meta.dirname, "..");
/** What `npm run build` reads: the TypeScript projects, the dashboard and their settings. */
const sources = [
  "src",
  "test",
  "scripts",
  "bench",
  "examples",
  "ui",
  "tsconfig.json",
  "package.json",
];
/** What it writes last in each of its two steps (tsc, then vite). */
const outputs = ["dist/src/bin/svc.js", "dist/ui/index.html"];
/** Under the sources, but written by runs rather than read by the build. */
const ignored = new Set([join(root, "bench", "results")]);

/** The newest modification time under `path` (a file or a directory), in milliseconds. */
function newest(path) {
  if (ignored.has(path)) return 0;
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

function builtAt() {
  let oldest = Infinity;
  for (const output of outputs) {
    const stat = statSync(join(root, output), { throwIfNoEntry: false });
    if (stat === undefined) return 0;
    oldest = Math.min(oldest, stat.mtimeMs);
  }
  return oldest;
}

const built = builtAt();
const changed = Math.max(...sources.map((source) => newest(join(root, source))));
if (built === 0 || changed > built) {
  process.stderr.write(
    `${built === 0 ? "dist/ is missing" : "dist/ is older than the sources"}: building it (npm run build)\n`,
  );
  // Through the npm that runs this script, when there is one (npm_execpath), else from PATH.
  const npm = process.env.npm_execpath;
  const build =
    npm === undefined
      ? spawnSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" })
      : spawnSync(process.execPath, [npm, "run", "build"], { cwd: root, stdio: "inherit" });
  process.exitCode = build.status ?? 1;
}
