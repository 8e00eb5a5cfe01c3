#!/usr/bin/env node
import { processIo } from "../cli/io.ts";
import { runCli } from "../cli/run.ts";

// The one place that ends the process: every command returns, and its status is the exit status.
process.exit(await runCli(process.argv.slice(2), processIo()));
