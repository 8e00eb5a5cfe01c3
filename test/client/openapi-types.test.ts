import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { openApiTypes } from "../../scripts/openapi-types.ts";
import { testBackend } from "../support/database.ts";
import { runProcess } from "../support/process.ts";
import { tempDir } from "../support/temp.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const here = join(root, "test", "client", "openapi-types");

/** The README's example of the client: the `ts` block of "Using the client from your backend". */
async function readmeExample(): Promise<string> {
  const readme = await readFile(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Using the client from your backend"));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block?.includes("svc-webhooks/client") === true, "the README's client example");
  return block;
}

/**
 * Issue 30's "the client compiled against the document with tsc --noEmit and 0 errors": the
 * types openapi-typescript makes of docs/openapi.json (checked in, kept fresh here) against the
 * client's, both ways, for every operation (openapi-types/client-types.check.ts); and the
 * README's example, as a user would compile it.
 */
describe(
  "the client's types, compiled against the OpenAPI document",
  // No store is involved: once per suite is enough.
  { skip: testBackend !== "sqlite" && "SQLite run only: no database is involved" },
  () => {
    it("openapi.d.ts is what openapi-typescript makes of docs/openapi.json (regenerate: npm run docs:openapi)", async () => {
      const document = await readFile(join(root, "docs", "openapi.json"), "utf8");
      assert.equal(
        await readFile(join(here, "openapi.d.ts"), "utf8"),
        await openApiTypes(document),
      );
    });

    it("every operation's path, query, body and answer agree both ways, and the README's example compiles: tsc --noEmit, 0 errors", async () => {
      const dir = await tempDir();
      try {
        // The README imports the package by name: here that name is the source's client.
        await writeFile(join(dir.path, "readme-example.mts"), await readmeExample());
        await writeFile(
          join(dir.path, "tsconfig.json"),
          JSON.stringify({
            extends: join(here, "tsconfig.json"),
            compilerOptions: {
              rootDir: "/",
              typeRoots: [join(root, "node_modules", "@types")],
              paths: { "svc-webhooks/client": [join(root, "src", "client", "index.ts")] },
            },
            files: [join(here, "client-types.check.ts"), "readme-example.mts"],
          }),
        );
        const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
        const run = await runProcess(process.execPath, [tsc, "-p", dir.path, "--pretty", "false"], {
          cwd: root,
          env: process.env,
        });
        assert.equal(`${run.stdout}${run.stderr}`, "", "no diagnostics");
        assert.equal(run.code, 0);
      } finally {
        await dir.cleanup();
      }
    });
  },
);
