import assert from "node:assert/strict";
import { delimiter, dirname } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { testBackend } from "../support/backend.ts";
import { registryAccessEnv, runProcess } from "../support/process.ts";

const script = fileURLToPath(new URL("../../../scripts/quickstart-check.sh", import.meta.url));

describe("the README's quickstart, run as written on a fresh clone", () => {
  it(
    "ends in a delivery the example receiver verified, leaves no secret where git sees it, and its teardown leaves nothing",
    {
      skip: testBackend !== "sqlite" && "SQLite run only: the quickstart uses SQLite",
      // A fresh clone's npm install, build and server start, then a sign-in in Chromium: about
      // two minutes on a quiet two-core machine, longer on a slow or shared one.
      timeout: 600_000,
    },
    async () => {
      const run = await runProcess("bash", [script], {
        env: {
          PATH: [dirname(process.execPath), process.env.PATH].join(delimiter),
          HOME: process.env.HOME,
          ...registryAccessEnv(),
        },
      });
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /the README's quickstart ends in a verified delivery/);
    },
  );
});
