import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Command } from "commander";
import type { CliIo } from "../../src/cli/io.ts";
import { buildProgram } from "../../src/cli/program.ts";
import { runCliInMemory } from "../support/in-memory-cli.ts";

/** Every group and command of svc, as typed after `svc`. */
function commandPaths(command: Command, path: readonly string[] = []): string[][] {
  return [
    [...path],
    ...command.commands
      .filter((sub) => sub.name() !== "help")
      .flatMap((sub) => commandPaths(sub, [...path, sub.name()])),
  ];
}

describe("svc --help, everywhere (issue 19)", () => {
  const paths = commandPaths(buildProgram({ env: {} } as unknown as CliIo));

  it("every group and command has examples in its help", async () => {
    assert.ok(paths.length > 30, `${paths.length} commands`);
    const without: string[] = [];
    for (const path of paths) {
      const run = await runCliInMemory([...path, "--help"], { env: {} });
      assert.equal(run.status, 0, `svc ${path.join(" ")} --help`);
      if (!/\nExamples:\n {2}\$ /.test(run.stdout)) without.push(`svc ${path.join(" ")}`);
    }
    assert.deepEqual(without, []);
  });

  it("a group's help lists no global options: its commands say which they take", async () => {
    const run = await runCliInMemory(["deliveries", "--help"], { env: {} });
    assert.doesNotMatch(run.stdout, /Global Options:/);
    const command = await runCliInMemory(["deliveries", "retry", "--help"], { env: {} });
    assert.match(command.stdout, /Global Options:[\s\S]*--dry-run/);
    assert.doesNotMatch(command.stdout, /--page-all/);
  });
});
