import type { SqlExecutor } from "../../src/store/database.ts";
import { testBackend } from "./database.ts";

/**
 * Where any of `needles` (ids) still appears in the database: every row of every table, as
 * JSON, searched for each. Empty when nothing of them is left anywhere; otherwise
 * `table: needle` for each find. What "nothing of it is left" means, checked whole: a table
 * added later is searched without this helper knowing of it.
 */
export async function tracesOf(db: SqlExecutor, needles: readonly string[]): Promise<string[]> {
  const tables =
    testBackend === "sqlite"
      ? await db.query<{ name: string }>(
          "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        )
      : await db.query<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
        );
  const found: string[] = [];
  for (const { name } of tables) {
    const rows = await db.query(`SELECT * FROM "${name}"`);
    const text = JSON.stringify(rows, (_key, value: unknown) =>
      typeof value === "bigint" ? String(value) : value,
    );
    for (const needle of needles) if (text.includes(needle)) found.push(`${name}: ${needle}`);
  }
  return found;
}
