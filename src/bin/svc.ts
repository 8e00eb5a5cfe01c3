#!/usr/bin/env -S node --max-semi-space-size=8
// The flag bounds V8's young generation (3 × 8 MB; decision 25): under sustained load V8 grows it to its
// default maximum, which added ~90 MB to the server's peak memory and nothing to its rate
// (docs/PERFORMANCE.md). The bench starts the server with the flags of this line.
import { nodeVersionProblem } from "./node-version.ts";

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
  const { processIo } = await import("../cli/io.ts");
  const { runCli } = await import("../cli/run.ts");
  return runCli(process.argv.slice(2), processIo());
}

// The one place that ends the process: every command returns, and its status is the exit status.
process.exit(await main());
