import assert from "node:assert/strict";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import { TableParam, type SqlValue, type TableColumn } from "../../src/store/database.ts";
import { SqliteDatabase, toSqlitePlaceholders } from "../../src/store/sqlite/sqlite-database.ts";
import {
  maxValuesRows,
  sqliteValues,
  TableStatements,
  withJsonTables,
} from "../../src/store/sqlite/table-params.ts";

/** Decision 64: SQLite binds a table parameter's cells as a VALUES list, or reads it as JSON. */

const columns: readonly TableColumn[] = [
  ["seq", "BIGINT"],
  ["lease", "TEXT"],
  ["attempt", "INTEGER"],
  ["note", "TEXT"],
];

/** Row `index` of a table: an integer past 2^32, a text, a small integer, a text or null. */
function rowOf(index: number): SqlValue[] {
  const notes = ['say "hi"', "é ☃ \u0000 end", null, "", "x".repeat(3000)];
  return [
    1_795_745_917_853 + index,
    `lease-${index}`,
    index % 7,
    notes[index % notes.length] ?? null,
  ];
}

function tableOf(rows: number): SqlValue[][] {
  return Array.from({ length: rows }, (_, index) => rowOf(index));
}

/** Each cell with its SQL type, as the statement read it. */
const readSql = (db: SqliteDatabase, placeholder = "$2") =>
  `WITH r AS (${db.tableOfRows(placeholder, columns)})
   SELECT $1 AS own, seq, typeof(seq) AS seq_type, lease, typeof(lease) AS lease_type,
          attempt, typeof(attempt) AS attempt_type, note, typeof(note) AS note_type,
          attempt + 1 AS next, json_object('seq', seq) AS json
   FROM r`;

describe("table parameters on SQLite (decision 64)", () => {
  let db: SqliteDatabase;

  before(async () => {
    db = new SqliteDatabase(":memory:");
    await db.executeScript(
      "CREATE TABLE written (seq INTEGER NOT NULL, lease TEXT NOT NULL, attempt INTEGER, note TEXT)",
    );
  });
  after(async () => {
    await db.close();
  });

  it("reads every row and cell, with the type JSON gave it, for every size bound or not", async () => {
    for (const rows of [1, 2, 7, 8, 9, 15, 16, 17, 63, maxValuesRows, maxValuesRows + 1, 200]) {
      const table = tableOf(rows);
      const bound = await db.query(readSql(db), ["own", new TableParam(table)]);
      const fromJson = await db.query(readSql(db), ["own", JSON.stringify(table)]);
      assert.equal(bound.length, rows, `${rows} rows`);
      assert.deepEqual(bound, fromJson, `${rows} rows`);
      assert.deepEqual(
        bound.map((row) => [row.seq, row.lease, row.attempt, row.note]),
        table,
        `${rows} rows`,
      );
      assert.deepEqual(new Set(bound.map((row) => row.seq_type)), new Set(["integer"]));
      assert.deepEqual(new Set(bound.map((row) => row.attempt_type)), new Set(["integer"]));
      assert.equal(bound[0]?.json, `{"seq":${String(table[0]?.[0])}}`, "an integer, not 1.7e12");
    }
  });

  it("an empty table reads no row", async () => {
    assert.deepEqual(await db.query(readSql(db), ["own", new TableParam([])]), []);
  });

  it("writes exactly the table's rows when the statement sorts them: the padding is never read", async () => {
    // A LIMIT cutting the padding kept NULL rows here: SQLite sorted the padded list before
    // applying it. The rows' index and a WHERE keep exactly the table's rows.
    const insert = `WITH r AS (${db.tableOfRows("$1", columns)})
      INSERT INTO written (seq, lease, attempt, note) SELECT seq, lease, attempt, note FROM r
      ORDER BY attempt`;
    for (const rows of [9, 12, 16, 33, 57]) {
      await db.execute("DELETE FROM written");
      assert.equal(await db.execute(insert, [new TableParam(tableOf(rows))]), rows);
      const written = await db.query<{ seq: number }>("SELECT seq FROM written ORDER BY seq");
      assert.deepEqual(
        written.map((row) => row.seq),
        tableOf(rows).map((row) => row[0]),
      );
    }
  });

  it("keeps the statement's own parameters, before and after the table's, whatever the table's size", async () => {
    const sql = `WITH r AS (${db.tableOfRows("$2", columns)})
      SELECT $1 AS first, $3 AS third, count(*) AS rows, sum(attempt) AS attempts FROM r
      WHERE lease <> $3`;
    for (const rows of [1, 5, 10, 64]) {
      const [read] = await db.query(sql, ["a", new TableParam(tableOf(rows)), "c"]);
      const attempts = tableOf(rows).reduce((sum, row) => sum + Number(row[2]), 0);
      assert.deepEqual({ ...read }, { first: "a", third: "c", rows, attempts });
    }
  });

  it("reads a table's first columns of wider and ragged rows, and rows too narrow from JSON", async () => {
    const wide = tableOf(10).map((row, index): SqlValue[] => [
      ...row,
      "extra",
      ...Array.from({ length: index }, () => 42),
    ]);
    const read = await db.query<{ seq: number }>(readSql(db), ["own", new TableParam(wide)]);
    assert.deepEqual(
      read.map((row) => row.seq),
      wide.map((row) => row[0]),
    );
    const narrow = tableOf(3).map((row, index) => (index === 1 ? row.slice(0, 2) : row));
    const narrowRead = await db.query(readSql(db), ["own", new TableParam(narrow)]);
    assert.deepEqual(
      narrowRead.map((row) => [row.seq, row.attempt]),
      [
        [narrow[0]?.[0], 0],
        [narrow[1]?.[0], null],
        [narrow[2]?.[0], 2],
      ],
    );
  });

  it("binds a table's cells without making its JSON text", async () => {
    // A bigint has no JSON: a table read from JSON throws, one bound does not.
    const rows = [[2n ** 40n, "big", 1, null]];
    const [read] = await db.query(readSql(db), ["own", new TableParam(rows)]);
    assert.equal(read?.seq, 2 ** 40);
    await assert.rejects(
      db.query(readSql(db), ["own", new TableParam(Array(maxValuesRows + 1).fill(rows[0]))]),
      /BigInt/,
    );
  });

  it("a placeholder two tables read, one of them as JSON, is bound for both", async () => {
    const narrow: readonly TableColumn[] = [["seq", "BIGINT"]];
    const sql = `WITH a AS (${db.tableOfRows("$1", narrow)}), b AS (${db.tableOfRows("$1", columns)})
      SELECT (SELECT count(*) FROM a) AS a_rows, (SELECT count(*) FROM b) AS b_rows`;
    const [read] = await db.query(sql, [new TableParam([[1], [2], [3]])]);
    assert.deepEqual({ ...read }, { a_rows: 3, b_rows: 3 });
  });

  it("refuses more parameters than its statement names, as SQLite does", async () => {
    await assert.rejects(db.query(readSql(db), ["own", new TableParam(tableOf(2)), "more"]));
  });

  it("reads a placeholder that the statement also uses elsewhere as JSON", async () => {
    const sql = `WITH r AS (${db.tableOfRows("$1", columns)})
      SELECT count(*) AS rows, json_array_length($1) AS length FROM r`;
    const [read] = await db.query(sql, [new TableParam(tableOf(4))]);
    assert.deepEqual({ ...read }, { rows: 4, length: 4 });
  });

  it("prepares a text at most 15 times for the sizes bound, numbering one parameter a row list", () => {
    const raw = new DatabaseSync(":memory:");
    try {
      const prepared: string[] = [];
      const prepare = (sql: string): StatementSync => {
        prepared.push(sql);
        return raw.prepare(toSqlitePlaceholders(sql));
      };
      const sql = readSql(db);
      const statements = TableStatements.of(sql, prepare) ?? assert.fail("no table in the text");
      for (let rows = 1; rows <= maxValuesRows; rows++) {
        const [statement, values] = statements.bind(["own", new TableParam(tableOf(rows))]);
        assert.equal(statement.all(...values).length, rows);
      }
      assert.equal(prepared.length, 15, "1 to 8 rows each, then 16, 24 … 64");
      for (const text of prepared) {
        // node:sqlite binds a numbered parameter in time that grows with the number before it.
        assert.ok((text.match(/\?\d+/g) ?? []).length <= 3, text.slice(0, 200));
      }
      statements.bind(["own", new TableParam(tableOf(maxValuesRows + 1))]);
      statements.bind(["own", JSON.stringify(tableOf(3))]);
      assert.equal(prepared.length, 16, "one more, the JSON form, for both");
      assert.equal(TableStatements.of("SELECT $1", prepare), null);
    } finally {
      raw.close();
    }
  });

  it("withJsonTables gives a reader that binds sqliteValues the JSON form", () => {
    const raw = new DatabaseSync(":memory:");
    try {
      const sql = toSqlitePlaceholders(withJsonTables(readSql(db)));
      assert.doesNotMatch(sql, /\/\*table/);
      const read = raw.prepare(sql).all(...sqliteValues(["own", new TableParam(tableOf(3))]));
      assert.deepEqual(
        read.map((row) => row.lease),
        ["lease-0", "lease-1", "lease-2"],
      );
    } finally {
      raw.close();
    }
  });
});
