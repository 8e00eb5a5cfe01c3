import { PassThrough } from "node:stream";
import type { Command } from "commander";
import type { CliIo } from "./io.ts";
import { PRERENDERED_HELP_WIDTH, type PrerenderedHelp } from "./prerendered-help.ts";
import { buildProgram } from "./program.ts";
import { runCli } from "./run.ts";

/** Every group and command of svc, as the words typed after `svc` (`[]` for svc itself). */
export function commandPaths(command: Command, path: readonly string[] = []): string[][] {
  return [
    [...path],
    ...command.commands
      .filter((sub) => sub.name() !== "help")
      .flatMap((sub) => commandPaths(sub, [...path, sub.name()])),
  ];
}

/** A stream that keeps what is written to it; not a terminal, so help is wrapped at 80. */
function collector(): PassThrough & { text(): string } {
  const chunks: Buffer[] = [];
  const stream = new PassThrough();
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  return Object.assign(stream, { text: () => Buffer.concat(chunks).toString("utf8") });
}

/**
 * What `svc <command> --help` prints for every command, rendered by commander through `runCli`
 * as a run of svc does: the texts `npm run build` keeps for `prerenderedHelp`.
 */
export async function renderHelpTexts(): Promise<PrerenderedHelp> {
  const paths = commandPaths(await buildProgram({ env: {} } as unknown as CliIo, []));
  const texts: Record<string, string> = {};
  for (const path of paths) {
    const stdout = collector();
    const stderr = collector();
    const stdin = new PassThrough();
    stdin.end();
    const status = await runCli([...path, "--help"], { stdin, stdout, stderr, env: {} });
    if (status !== 0 || stderr.text() !== "") {
      throw new Error(`svc ${path.join(" ")} --help: exit ${status}: ${stderr.text()}`);
    }
    texts[path.join(" ")] = stdout.text();
  }
  return { width: PRERENDERED_HELP_WIDTH, texts };
}
