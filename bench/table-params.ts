/**
 * `npm run bench:table-params -- [--rounds 4] [--statements 3000]`: what a batch's rows cost
 * SQLite as one parameter, read from one JSON text (`jsonb_each` and `->>`, as every batch was
 * until decision 64) and bound as a VALUES list (`TableParam`), for a 13-column INSERT of 1 to
 * 64 rows (a round of results is 13 columns) into an in-memory database. Rounds alternate
 * between the two, so that a machine whose speed moves meets both alike. Prints µs a
 * statement for each and their ratio.
 */
import { TableParam, type SqlValue } from "../src/store/database.ts";
import { resultColumns } from "../src/store/sql/deliveries.ts";
import { SqliteDatabase } from "../src/store/sqlite/sqlite-database.ts";
import { argument, progress, round } from "./stats.ts";

const rounds = Number(argument("--rounds") ?? 4);
const statements = Number(argument("--statements") ?? 3_000);

/** A round of results' columns, as the worker records them. */
const columns = resultColumns;

/** A delivered result's row, as the worker reports one. */
function rowOf(seq: number): SqlValue[] {
  return [
    seq,
    "lease-0123456789abcdef:0123456789abcdef",
    "delivered",
    null,
    null,
    1,
    1_795_745_917_853,
    200,
    12,
    null,
    "ok",
    null,
    "v1,3q2+7w7b2VnZ0YzL5oS6qNnXbmM9N0qgS3wTtO8xj1U=",
  ];
}

const db = new SqliteDatabase(":memory:");
await db.executeScript(
  `CREATE TABLE results (${columns.map(([name, type]) => `${name} ${type}`).join(", ")})`,
);
const insert = `INSERT INTO results SELECT * FROM (${db.tableOfRows("$1", columns)})`;
const forms = {
  json: (rows: SqlValue[][]) => JSON.stringify(rows),
  bound: (rows: SqlValue[][]) => new TableParam(rows),
};

/** µs a statement of `rows` rows in `form`, over `statements` statements. */
async function measure(form: keyof typeof forms, rows: SqlValue[][]): Promise<number> {
  const started = process.hrtime.bigint();
  for (let index = 0; index < statements; index++) {
    await db.execute(insert, [forms[form](rows)]);
  }
  const us = Number(process.hrtime.bigint() - started) / 1000 / statements;
  await db.execute("DELETE FROM results");
  return us;
}

console.log("rows   from JSON   bound   bound/JSON");
for (const size of [1, 8, 16, 32, 64]) {
  const rows = Array.from({ length: size }, (_, index) => rowOf(index));
  const totals = { json: 0, bound: 0 };
  await measure("json", rows); // warm-up of both statements
  await measure("bound", rows);
  for (let index = 0; index < rounds; index++) {
    progress(`table-params: ${size} rows, round ${index + 1}/${rounds}`);
    totals.json += await measure("json", rows);
    totals.bound += await measure("bound", rows);
  }
  const json = totals.json / rounds;
  const bound = totals.bound / rounds;
  console.log(
    `${String(size).padEnd(6)} ${String(round(json, 1)).padStart(9)} ${String(round(bound, 1)).padStart(7)} ${String(round(bound / json, 2)).padStart(12)}`,
  );
}
await db.close();
