import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { openApiTypes } from "../../scripts/openapi-types.ts";
import { sqlitePassOnly } from "../support/backend.ts";
import { runProcess } from "../support/process.ts";
import { tempDir } from "../support/temp.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const here = join(root, "test", "client", "openapi-types");

/** The documented example of the client: docs/http-api.md's "Using the client from your backend". */
async function documentedExample(): Promise<string> {
  const page = await readFile(join(root, "docs", "http-api.md"), "utf8");
  const section = page.slice(page.indexOf("## Using the client from your backend"));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block?.includes("svc-webhooks/client") === true, "the documented client example");
  return block;
}

/**
 * Issue 30's "the client compiled against the document with tsc --noEmit and 0 errors": the
 * types openapi-typescript makes of docs/openapi.json (checked in, kept fresh here) against the
 * client's, both ways, for every operation (openapi-types/client-types.check.ts); and the
 * example of docs/http-api.md (the README's pointer to the client), as a user would compile it.
 */
describe(
  "the client's types, compiled against the OpenAPI document",
  { skip: sqlitePassOnly },
  () => {
    it("openapi.d.ts is what openapi-typescript makes of docs/openapi.json (regenerate: npm run docs:openapi)", async () => {
      const document = await readFile(join(root, "docs", "openapi.json"), "utf8");
      assert.equal(
        await readFile(join(here, "openapi.d.ts"), "utf8"),
        await openApiTypes(document),
      );
    });

    it("every operation's path, query, body and answer agree both ways, and the documented example compiles: tsc --noEmit, 0 errors", async () => {
      const dir = await tempDir();
      try {
        // The example imports the package by name: here that name is the source's client.
        await writeFile(join(dir.path, "documented-example.mts"), await documentedExample());
        await writeFile(
          join(dir.path, "tsconfig.json"),
          JSON.stringify({
            extends: join(here, "tsconfig.json"),
            compilerOptions: {
              rootDir: "/",
              typeRoots: [join(root, "node_modules", "@types")],
              paths: { "svc-webhooks/client": [join(root, "src", "client", "index.ts")] },
            },
            files: [join(here, "client-types.check.ts"), "documented-example.mts"],
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
