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
  it("every group and command has examples in its help", async () => {
    const paths = commandPaths(await buildProgram({ env: {} } as unknown as CliIo, []));
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
    assert.doesNotMatch(run.stdout, /Global Options/);
    const command = await runCliInMemory(["deliveries", "retry", "--help"], { env: {} });
    assert.match(command.stdout, /Global Options[^\n]*:\n( {2}[^\n]*\n)* {2}[^\n]*--dry-run/);
    assert.doesNotMatch(command.stdout, /--page-all/);
  });

  it("a command's help shows its own options first, then the global ones once, in brief", async () => {
    const run = await runCliInMemory(["webhooks", "create", "--help"], { env: {} });
    const own = run.stdout.indexOf("\nOptions:\n");
    const global = run.stdout.indexOf('\nGlobal Options (described in "svc --help"):\n');
    assert.ok(own !== -1 && global > own, run.stdout);
    const globalLines =
      run.stdout
        .slice(global + 1)
        .split("\n\n")[0]
        ?.split("\n") ?? [];
    assert.ok(globalLines.length <= 4, globalLines.join("\n")); // the heading and three lines
    assert.match(globalLines.join(" "), /--workspace <workspace-id> .*--json .*--dry-run/);
    assert.equal(run.stdout.split("--workspace").length - 1, 1, "listed once");
    const top = await runCliInMemory(["--help"], { env: {} });
    assert.match(top.stdout, /--workspace <workspace-id> +workspace to act on/, "described there");
  });

  it("the operator's remote commands say which key they need; webhooks keeps its five", async () => {
    for (const group of ["workspaces", "keys", "portal-link", "portal-sessions"]) {
      const run = await runCliInMemory([group, "--help"], { env: {} });
      assert.match(run.stdout, /SERVICE_API_KEY \(svc_op_…/, group);
      assert.match(run.stdout, /operator_key_required/, group);
    }
    const link = await runCliInMemory(["portal-link", "create", "--help"], { env: {} });
    assert.match(link.stdout, /printed on stdout alone: it is a bearer credential/);
    assert.doesNotMatch(link.stdout, /--output/, "the URL is never written to a file");
    const webhooks = (await buildProgram({ env: {} } as unknown as CliIo, [])).commands.find(
      (command) => command.name() === "webhooks",
    );
    assert.deepEqual(
      webhooks?.commands.map((command) => command.name()),
      ["list", "create", "get", "update", "delete"],
    );
  });
});
