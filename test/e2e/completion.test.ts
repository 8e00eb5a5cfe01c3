import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertExit } from "../support/cli.ts";
import { runProcess } from "../support/process.ts";
import { runSvc } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

/**
 * `svc completion bash|zsh|fish` through the built binary; the bash script is run by bash the
 * way bash runs it on Tab (COMP_WORDS, COMP_CWORD, then the function), and what it offers is
 * checked.
 */
describe("svc completion", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bashScript: string;

  before(async () => {
    dir = await tempDir();
    const run = await runSvc(["completion", "bash"]);
    assertExit(run, 0);
    bashScript = join(dir.path, "svc.bash");
    await writeFile(bashScript, run.stdout);
  });
  after(() => dir.cleanup());

  /** What Tab offers after the words typed (the last one being completed). */
  const offered = async (...typed: string[]): Promise<string[]> => {
    const words = ["svc", ...typed].map((word) => `'${word}'`).join(" ");
    const run = await runProcess(
      "bash",
      [
        "-c",
        `source '${bashScript}'; COMP_WORDS=(${words}); COMP_CWORD=${typed.length}; _svc_complete svc '${typed.at(-1) ?? ""}'; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { env: { PATH: process.env.PATH } },
    );
    assert.equal(run.code, 0, run.stderr);
    return run.stdout.split("\n").filter((line) => line !== "");
  };

  it("bash: offers the commands, then a group's subcommands", async () => {
    assert.deepEqual(await offered("web"), ["webhooks"]);
    assert.deepEqual(await offered("de"), ["deliveries"]);
    assert.deepEqual(await offered("webhooks", ""), [
      "list",
      "create",
      "get",
      "update",
      "delete",
      "-h",
      "--help",
    ]);
    assert.deepEqual(await offered("deliveries", "re"), ["retry", "recover"]);
  });

  it("bash: offers a command's own options and the global options it takes, past ids and values", async () => {
    assert.deepEqual(await offered("webhooks", "get", "dst_1", "--ti"), ["--timing"]);
    assert.deepEqual(await offered("webhooks", "get", "--page"), [], "get takes no --page-all");
    assert.deepEqual(await offered("webhooks", "list", "--page"), ["--page-all"]);
    assert.ok((await offered("deliveries", "list", "--")).includes("--status"));
    assert.deepEqual(await offered("--json", "events", "li"), ["list"]);
  });

  it("zsh: the bash functions through bashcompinit", async () => {
    const run = await runSvc(["completion", "zsh"]);
    assertExit(run, 0);
    assert.match(run.stdout, /^# svc completion for zsh/);
    assert.match(run.stdout, /bashcompinit/);
    assert.match(run.stdout, /complete -o default -F _svc_complete svc/);
  });

  it("fish: one line per word of each command, offered where the command is reached", async () => {
    const run = await runSvc(["completion", "fish"]);
    assertExit(run, 0);
    assert.match(run.stdout, /^complete -c svc -f -n '__svc_at webhooks' -a 'list' -d /m);
    assert.match(run.stdout, /^complete -c svc -n '__svc_at deliveries list' -l status -d /m);
    assert.match(run.stdout, /^complete -c svc -n '__svc_at webhooks delete' -s y -l yes -d /m);
  });

  it("refuses a shell it does not know, as a usage error", async () => {
    const run = await runSvc(["completion", "tcsh"]);
    assertExit(run, 2);
    assert.match(run.stderr, /^error: .*tcsh.*bash, zsh, fish.*\(usage_error\)\n$/);
  });
});
