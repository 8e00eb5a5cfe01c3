import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { errorCatalog, type ErrorDefinition } from "../src/errors.ts";

const referencePath = new URL("../../docs/errors.md", import.meta.url);

describe("docs/errors.md", () => {
  it("lists every error code with its HTTP status, exit status, message and Retry-After, and nothing else", async () => {
    const reference = await readFile(referencePath, "utf8");
    const rows = reference
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .map((line) => line.split("|").map((cell) => cell.trim()));
    const documented = new Map(rows.map((cells) => [cells[1]?.replace(/`/g, ""), cells]));
    for (const [code, definition] of Object.entries(errorCatalog)) {
      const row = documented.get(code);
      assert.ok(row, `${code} is missing from docs/errors.md`);
      assert.equal(row[2], definition.status === null ? "—" : String(definition.status), code);
      assert.equal(row[3], String(definition.exit), code);
      assert.equal(row[4], definition.message.replace(/\|/g, "\\|"), code);
      const retryAfter = (definition as ErrorDefinition).retryAfterSeconds;
      assert.equal(row[5], retryAfter === undefined ? "—" : String(retryAfter), code);
      if (definition.status === 503)
        assert.notEqual(retryAfter, undefined, `${code}: 503 needs Retry-After`);
    }
    assert.deepEqual(
      [...documented.keys()].filter((code) => !(code! in errorCatalog)),
      [],
      "docs/errors.md lists codes that do not exist",
    );
  });
});
