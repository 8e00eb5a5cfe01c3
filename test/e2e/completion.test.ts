import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertExit } from "../support/cli.ts";
import { runProcess } from "../support/process.ts";
import { runSvc } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";
import { sqlitePassOnly } from "../support/backend.ts";

/**
 * `svc completion bash|zsh|fish` through the built binary; the bash script is run by bash the
 * way bash runs it on Tab (COMP_WORDS, COMP_CWORD, then the function), and what it offers is
 * checked.
 */
describe("svc completion", { skip: sqlitePassOnly }, () => {
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
    // The operator's remote commands (decision 42), beside the host's `svc admin`.
    assert.deepEqual(await offered("wo"), ["workspaces"]);
    assert.deepEqual(await offered("portal"), ["portal-link", "portal-sessions"]);
    assert.deepEqual(await offered("keys", ""), ["list", "create", "revoke", "-h", "--help"]);
    assert.deepEqual(await offered("workspaces", "delete", "ws_1", "--c"), ["--cascade"]);
    assert.deepEqual(await offered("keys", "create", "--expires-"), [
      "--expires-at",
      "--expires-in",
    ]);
  });

  it("bash: offers a command's own options and the global options it takes, past ids and values", async () => {
    assert.deepEqual(await offered("webhooks", "get", "dst_1", "--ti"), ["--timing"]);
    assert.deepEqual(await offered("webhooks", "get", "--page"), [], "get takes no --page-all");
    assert.deepEqual(await offered("webhooks", "list", "--page"), ["--page-all"]);
    assert.ok((await offered("deliveries", "list", "--")).includes("--status"));
    assert.deepEqual(await offered("--json", "events", "li"), ["list"]);
  });

  /** Runs a shell that must be installed (.ci/run installs zsh and fish). */
  const shell = async (name: string, script: string): Promise<string[]> => {
    const run = await runProcess(name, ["-c", script], { env: { PATH: process.env.PATH } }).catch(
      (error: unknown) => {
        throw new Error(`${name} is needed for this test (apt-get install ${name})`, {
          cause: error,
        });
      },
    );
    assert.equal(run.code, 0, run.stderr);
    return run.stdout.split("\n").filter((line) => line !== "");
  };

  it("zsh: the same functions through bashcompinit, after compinit", async () => {
    const run = await runSvc(["completion", "zsh"]);
    assertExit(run, 0);
    assert.match(run.stdout, /^# svc completion for zsh/);
    const script = join(dir.path, "svc.zsh");
    await writeFile(script, run.stdout);
    // zsh filters by the typed prefix itself (its compgen offers every word): the command
    // reached is what is checked.
    const words = await shell(
      "zsh",
      `autoload -U compinit && compinit -u -d '${dir.path}/zcompdump'; source '${script}'
       COMP_WORDS=(svc webhooks get dst_1 --ti); COMP_CWORD=4; _svc_complete svc --ti
       print -l -- $COMPREPLY`,
    );
    assert.ok(words.includes("--timing") && !words.includes("--page-all"), words.join(" "));
  });

  it("fish: each command's words, with their descriptions, where the command is reached", async () => {
    const run = await runSvc(["completion", "fish"]);
    assertExit(run, 0);
    const script = join(dir.path, "svc.fish");
    await writeFile(script, run.stdout);
    const complete = (line: string) =>
      shell("fish", `source '${script}'; complete -C'${line}'`).then((lines) =>
        lines.map((entry) => entry.split("\t")[0]),
      );
    assert.deepEqual(await complete("svc webh"), ["webhooks"]);
    assert.deepEqual(await complete("svc webhooks get dst_1 --ti"), ["--timing"]);
    assert.deepEqual(await complete("svc webhooks get --page"), []);
    assert.deepEqual(await complete("svc deliveries list --st"), ["--status"]);
  });

  it("refuses a shell it does not know, as a usage error", async () => {
    const run = await runSvc(["completion", "tcsh"]);
    assertExit(run, 2);
    assert.match(run.stderr, /^error: .*tcsh.*bash, zsh, fish.*\(usage_error\)\n$/);
  });
});
