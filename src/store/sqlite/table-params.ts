/**
 * SQLite's table parameters (decision 64): a batch's rows bound cell by cell into a VALUES
 * list, where PostgreSQL receives them as one JSON text.
 *
 * `tableMarker` stands in a statement's text for the table of a placeholder. A statement with
 * markers is prepared per shape of its tables: a `TableParam` of 1 to `maxValuesRows` rows
 * becomes `SELECT column1 AS seq, … FROM (VALUES (?9, ?), (?, ?) …)`, its cells bound after
 * the statement's own parameters; anything else (no row, too many, a JSON text) reads the
 * parameter as JSON, `jsonb_each` and `->>`. Above eight rows a VALUES list is made for a
 * multiple of eight rows, the rest bound as NULL and cut by a WHERE: a statement text serves
 * eight sizes, and a statement is prepared at most 15 times.
 */
import type { SQLInputValue, StatementSync } from "node:sqlite";
import { TableParam, type SqlParam, type TableColumn } from "../database.ts";

/** The most rows bound as a VALUES list; a larger table is read as JSON. */
export const maxValuesRows = 64;
/** Up to this many rows a VALUES list has the table's own size; above, a multiple of it. */
const exactRows = 8;
/** SQLite's most parameters in one statement (SQLITE_MAX_VARIABLE_NUMBER). */
const maxParameters = 32_766;

/** What `Database.tableOfRows` writes in a statement's text on SQLite, expanded on preparing. */
export function tableMarker(placeholder: string, columns: readonly TableColumn[]): string {
  const described = columns.map(([name, type]) => `${name} ${type}`).join(", ");
  return `/*table ${placeholder}: ${described}*/`;
}

const markers = /\/\*table \$(\d+): ([^*]*)\*\//g;

/** The columns a marker describes. */
function columnsOf(described: string): TableColumn[] {
  return described.split(", ").map((column): TableColumn => {
    const [name = "", type] = column.split(" ");
    return [name, type === "TEXT" ? "TEXT" : type === "BIGINT" ? "BIGINT" : "INTEGER"];
  });
}

/** A table's marker in a statement's text. */
interface TableSlot {
  /** Its parameter's index (the placeholder's number less one). */
  readonly index: number;
  readonly columns: readonly TableColumn[];
  /** Whether the statement reads the parameter elsewhere too: then it is always JSON. */
  readonly alsoElsewhere: boolean;
}

/** The text of a table read from JSON, `placeholder` its parameter. */
function jsonForm(placeholder: string, columns: readonly TableColumn[]): string {
  // `->>` gives each cell its SQL type from JSON (a number an INTEGER, a string TEXT).
  // `jsonb_each`, not `json_each`: it parses the parameter once and gives each row as JSONB,
  // which `->>` reads in place; a row as JSON text is parsed again by each `->>`, once per
  // column (a record's batch has 13). Half the CPU of unpacking a batch, the same values.
  const cells = columns.map(([name], index) => `value ->> ${index} AS ${name}`);
  return `SELECT ${cells.join(", ")} FROM jsonb_each(${placeholder})`;
}

/**
 * The text of a table bound as `rows` rows of a cell per column, the first cell parameter
 * `first`, the others anonymous (`?`, each numbered one past the one before): node:sqlite
 * finds where to bind each argument by the names of the parameters before it, and a
 * numbered one has a name, so a list of `?NNN`s takes time to bind that grows with its
 * square. `count` is the parameter that holds how many rows are the table's, the rest
 * padding, or null when all are: each row then leads with its index, a literal, and the
 * padding is cut by a WHERE on it. (Not a LIMIT: a LIMIT without an ORDER BY may keep any
 * rows, and SQLite does keep padding when it sorts the rows for the statement around it.)
 */
function valuesForm(
  columns: readonly TableColumn[],
  rows: number,
  first: number,
  count: number | null,
): string {
  const width = columns.length;
  const shift = count === null ? 1 : 2;
  // node:sqlite binds a number as a REAL; JSON's `->>` read an integer as an INTEGER.
  const cells = columns.map(([name, type], index) => {
    const column = `column${index + shift}`;
    return type === "TEXT" ? `${column} AS ${name}` : `CAST(${column} AS INTEGER) AS ${name}`;
  });
  const rest = ", ?".repeat(width - 1);
  const list = Array.from({ length: rows }, (_, row) => {
    const bound = `${row === 0 ? `?${first}` : "?"}${rest}`;
    return count === null ? `(${bound})` : `(${row}, ${bound})`;
  });
  const cut = count === null ? "" : ` WHERE column1 < ?${count}`;
  return `SELECT ${cells.join(", ")} FROM (VALUES ${list.join(", ")})${cut}`;
}

function toSqliteValue(value: SqlParam): SQLInputValue {
  if (value instanceof TableParam) return JSON.stringify(value.rows);
  return typeof value === "boolean" ? Number(value) : value;
}

/** `sql` with its tables read from JSON, for a reader that binds `sqliteValues`. */
export function withJsonTables(sql: string): string {
  return sql.replace(markers, (_marker, number: string, described: string) =>
    jsonForm(`$${number}`, columnsOf(described)),
  );
}

/** The values to bind for `params`, a table as its JSON text. */
export function sqliteValues(params: readonly SqlParam[]): SQLInputValue[] {
  return params.map(toSqliteValue);
}

/** The rows a VALUES list for `rows` rows is made for. */
function valuesRowsFor(rows: number): number {
  return rows <= exactRows ? rows : Math.ceil(rows / exactRows) * exactRows;
}

/**
 * The statements of one text with table markers, one per shape of its tables; null from
 * `of` for a text without any.
 */
export class TableStatements {
  static of(sql: string, prepare: (sql: string) => StatementSync): TableStatements | null {
    if (!sql.includes("/*table $")) return null;
    const found = [...sql.matchAll(markers)];
    const outside = sql.replace(markers, "");
    const numbers = [...outside.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]));
    const tables = found.map((match): TableSlot => {
      const number = Number(match[1]);
      const columns = columnsOf(match[2] ?? "");
      return { index: number - 1, columns, alsoElsewhere: numbers.includes(number) };
    });
    const highest = Math.max(0, ...numbers, ...tables.map((table) => table.index + 1));
    return new TableStatements(sql, tables, highest, prepare);
  }

  readonly #sql: string;
  readonly #tables: readonly TableSlot[];
  /** The highest placeholder the text names: the tables' cells are bound after it. */
  readonly #highest: number;
  readonly #prepare: (sql: string) => StatementSync;
  /** By shape: a number made of each table's rows and padding (`shapeOf`). */
  readonly #shapes = new Map<number | string, StatementSync>();
  /** By parameter index: whether a table reads it. */
  readonly #read: boolean[] = [];

  private constructor(
    sql: string,
    tables: readonly TableSlot[],
    highest: number,
    prepare: (sql: string) => StatementSync,
  ) {
    this.#sql = sql;
    this.#tables = tables;
    this.#highest = highest;
    this.#prepare = prepare;
    for (const table of tables) this.#read[table.index] = true;
  }

  /** The statement for `params`' tables, and the values to bind to it. */
  bind(params: readonly SqlParam[]): [StatementSync, SQLInputValue[]] {
    const highest = this.#highest;
    if (params.length > highest) {
      throw new RangeError(`${params.length} parameters for a statement that names ${highest}`);
    }
    // The statement's own parameters; a table's, null until its form is known.
    const values: SQLInputValue[] = [];
    for (let index = 0; index < highest; index++) {
      const param = params[index] ?? null;
      values.push(param instanceof TableParam ? null : toSqliteValue(param));
    }
    // A table's form, per table in order: the rows of its VALUES list, or 0 (JSON).
    const forms: { rows: number; first: number; count: number | null }[] = [];
    const asJson: boolean[] = [];
    let shape: number | string = highest;
    for (const table of this.#tables) {
      const param = params[table.index];
      const width = table.columns.length;
      const listed = param instanceof TableParam ? bindableRows(param, table) : 0;
      if (listed === 0 || values.length + listed * width + 1 > maxParameters) {
        forms.push({ rows: 0, first: 0, count: null });
        asJson[table.index] = true;
        shape = shapeOf(shape, 0, this.#tables.length);
        continue;
      }
      const { rows } = param as TableParam;
      // Above `exactRows` always counted, a full list too: one text per multiple of eight.
      let count: number | null = null;
      if (listed > exactRows) {
        values.push(rows.length);
        count = values.length;
      }
      const first = values.length + 1;
      // The table's columns of each row: cells past them are not read (the JSON form's way).
      for (const row of rows) {
        for (let cell = 0; cell < width; cell++) values.push(toSqliteValue(row[cell] ?? null));
      }
      for (let index = (listed - rows.length) * width; index > 0; index--) values.push(null);
      forms.push({ rows: listed, first, count });
      shape = shapeOf(shape, listed * 2 + (count === null ? 0 : 1), this.#tables.length);
    }
    // A table read as JSON, or read by no table at all, is bound as its JSON text.
    for (let index = 0; index < highest; index++) {
      const param = params[index];
      if (param instanceof TableParam && (asJson[index] === true || !this.#read[index])) {
        values[index] = JSON.stringify(param.rows);
      }
    }
    let statement = this.#shapes.get(shape);
    if (statement === undefined) {
      let index = 0;
      const sql = this.#sql.replace(markers, (_marker, number: string) => {
        const table = this.#tables[index] as TableSlot;
        const form = forms[index++] as (typeof forms)[number];
        return form.rows === 0
          ? jsonForm(`$${number}`, table.columns)
          : valuesForm(table.columns, form.rows, form.first, form.count);
      });
      statement = this.#prepare(sql);
      this.#shapes.set(shape, statement);
    }
    return [statement, values];
  }
}

/**
 * `shape` extended by a table's `code`: a number while it stays exact (a statement's one or
 * two tables, the case of every statement here), a text past that. A number is a cheap key;
 * a text made anew for each call is hashed for each lookup.
 */
function shapeOf(shape: number | string, code: number, tables: number): number | string {
  return tables <= 2 ? (shape as number) * 1_000_003 + code : `${shape}:${code}`;
}

/**
 * The rows of the VALUES list that binds `param` for `table`: its own (1 to `maxValuesRows`,
 * each with a cell for each of the table's columns) rounded up (`valuesRowsFor`), or 0 when
 * it is read as JSON.
 */
function bindableRows(param: TableParam, table: TableSlot): number {
  const { rows } = param;
  if (table.alsoElsewhere || rows.length === 0 || rows.length > maxValuesRows) return 0;
  for (const row of rows) if (row.length < table.columns.length) return 0;
  return valuesRowsFor(rows.length);
}
