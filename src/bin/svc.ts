#!/usr/bin/env -S node --max-semi-space-size=16
// The flag bounds V8's young generation (3 × 16 MB; decisions 25 and 59): under sustained load V8 grows it to its
// default maximum, which added ~90 MB to the server's peak memory and nothing to its rate
// (docs/PERFORMANCE.md). The bench starts the server with the flags of this line.
import nodeModule from "node:module";
import { nodeVersionProblem } from "./node-version.ts";

// Node keeps the code it compiled for svc's modules (in the system's temporary directory;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off), so that later runs skip compiling them: a CLI is
// started again and again (decision 51). Failing to enable it changes nothing else. Called
// optionally: a Node too old to have it gets to the version check below.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
nodeModule.enableCompileCache?.();

/**
 * The Node version is checked before the CLI is loaded: its modules import `node:sqlite`,
 * which an older Node refuses with a stack trace. So they are imported only after the check,
 * dynamically. The refusal has the form of every other error, with its catalog code
 * (`node_too_old`, exit 1); the catalog is not imported for it, so that this file's only
 * static import is the module that imports nothing.
 */
async function main(): Promise<number> {
  const nodeProblem = nodeVersionProblem(process.versions.node);
  if (nodeProblem !== null) {
    process.stderr.write(`error: ${nodeProblem} (node_too_old)\n`);
    return 1;
  }
  const argv = process.argv.slice(2);
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    // What commander prints for it, without loading commander and the command tree: scripts
    // ask for the version to decide what to run, and it should cost no more than node itself.
    const { VERSION } = await import("../version.ts");
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const last = argv.at(-1);
  if (last === "--help" || last === "-h") {
    // A command's help as the build rendered it, without commander and the command tree,
    // when the texts fit this output (decision 51's addendum); else commander renders it.
    const { prerenderedHelp } = await import("../cli/prerendered-help.ts");
    const help = prerenderedHelp(argv, process.stdout);
    if (help !== undefined) {
      process.stdout.write(help);
      return 0;
    }
  }
  const { processIo } = await import("../cli/io.ts");
  const { runCli } = await import("../cli/run.ts");
  return runCli(argv, processIo());
}

// The one place that ends the process: every command returns, and its status is the exit status.
process.exit(await main());
