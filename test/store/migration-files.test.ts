import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { describe, it } from "node:test";
import { splitStatements } from "../../src/store/migrate.ts";

const migrations = new URL("../../../migrations/", import.meta.url);

async function files(dialect: string): Promise<string[]> {
  return (await readdir(new URL(`${dialect}/`, migrations)))
    .filter((f) => f.endsWith(".sql"))
    .sort();
}

describe("the migration files", () => {
  it("each number is one migration, NNNNNN_name.sql, the same in both dialects", async () => {
    const sqlite = await files("sqlite");
    const postgres = await files("postgres");
    assert.deepEqual(sqlite, postgres, "every migration is written for both engines");
    for (const file of sqlite) assert.match(file, /^\d{6}_[a-z0-9_]+\.sql$/);
    const numbers = sqlite.map((file) => file.slice(0, 6));
    const repeated = numbers.filter((number, index) => numbers.indexOf(number) !== index);
    assert.deepEqual(repeated, [], "a number taken twice: renumber the newer migration");
  });

  it("are split at each semicolon that ends a line, outside a function's $$ body", () => {
    const body = [
      "CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$",
      "BEGIN",
      "  -- kept: inside the body",
      "  DELETE FROM a;",
      "  DELETE FROM a;",
      "END",
    ];
    const sql = ["-- a comment", "CREATE TABLE a (x INTEGER);", ...body, "$$;", "DROP TABLE a"];
    assert.deepEqual(splitStatements(sql.join("\n")), [
      "CREATE TABLE a (x INTEGER)",
      [...body, "$$"].join("\n"),
      "DROP TABLE a",
    ]);
  });
});
