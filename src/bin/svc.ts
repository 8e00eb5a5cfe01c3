#!/usr/bin/env -S node --max-semi-space-size=8
// The flag bounds V8's young generation (3 × 8 MB; decision 25): under sustained load V8 grows it to its
// default maximum, which added ~90 MB to the server's peak memory and nothing to its rate
// (docs/PERFORMANCE.md). The bench starts the server with the flags of this line.
import { processIo } from "../cli/io.ts";
import { runCli } from "../cli/run.ts";

// The one place that ends the process: every command returns, and its status is the exit status.
process.exit(await runCli(process.argv.slice(2), processIo()));
