import assert from "node:assert/strict";
import { copyFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { CliIo } from "../../src/cli/io.ts";
import { buildProgram } from "../../src/cli/program.ts";
import {
  PRERENDERED_HELP_FILE,
  helpRequestPath,
  prerenderedHelp,
} from "../../src/cli/prerendered-help.ts";
import { commandPaths } from "../../src/cli/render-help-texts.ts";
import { runCliInMemory } from "../support/in-memory-cli.ts";
import { tempDir } from "../support/temp.ts";

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

describe("svc <command> --help from the texts the build wrote (decision 51's addendum)", () => {
  it("prints for every command exactly what commander prints, from dist's help.json", async () => {
    const paths = commandPaths(await buildProgram({ env: {} } as unknown as CliIo, []));
    const differ: string[] = [];
    for (const path of paths) {
      for (const flag of ["--help", "-h"]) {
        const run = await runCliInMemory([...path, flag], { env: {} });
        assert.equal(run.status, 0, `svc ${path.join(" ")} ${flag}`);
        if (prerenderedHelp([...path, flag], {}) !== run.stdout) {
          differ.push(`svc ${path.join(" ")} ${flag}`);
        }
      }
    }
    assert.deepEqual(differ, []);
  });

  it("is used only for a command's words and --help; commander renders anything else", () => {
    assert.equal(helpRequestPath(["webhooks", "list", "--help"]), "webhooks list");
    assert.equal(helpRequestPath(["--help"]), "");
    assert.equal(helpRequestPath(["portal-link", "-h"]), "portal-link");
    assert.equal(helpRequestPath(["--json", "webhooks", "--help"]), undefined);
    assert.equal(helpRequestPath(["webhooks", "get", "dst_1", "--help"]), undefined);
    assert.equal(helpRequestPath(["webhooks", "list"]), undefined);
    assert.equal(helpRequestPath(["webhooks", "--help", "list"]), undefined);
    assert.equal(prerenderedHelp(["webhooks", "lst", "--help"], {}), undefined, "a typo");
    const text = prerenderedHelp(["webhooks", "--help"], {});
    assert.match(text ?? "", /^Usage: svc webhooks/);
    assert.equal(prerenderedHelp(["webhooks", "--help"], { isTTY: true, columns: 80 }), text);
    assert.equal(
      prerenderedHelp(["webhooks", "--help"], { isTTY: true, columns: 120 }),
      undefined,
      "a terminal of another width gets commander's wrapping",
    );
    assert.equal(prerenderedHelp(["webhooks", "--help"], { isTTY: true }), undefined);
  });

  it("is not used when missing, or older than the compiled command tree", async () => {
    const dir = await tempDir();
    try {
      const texts = pathToFileURL(join(dir.path, "help.json"));
      const program = pathToFileURL(join(dir.path, "program.js"));
      await writeFile(program, "");
      const files = { texts, program };
      assert.equal(prerenderedHelp(["webhooks", "--help"], {}, files), undefined, "no texts");
      await copyFile(PRERENDERED_HELP_FILE, texts);
      const past = new Date(Date.now() - 60_000);
      await utimes(program, past, past);
      assert.match(prerenderedHelp(["webhooks", "--help"], {}, files) ?? "", /^Usage: svc/);
      const future = new Date(Date.now() + 60_000);
      await utimes(program, future, future);
      assert.equal(prerenderedHelp(["webhooks", "--help"], {}, files), undefined, "stale texts");
    } finally {
      await dir.cleanup();
    }
  });
});
