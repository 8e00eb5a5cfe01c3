import type { SqlValue } from "../database.ts";

/**
 * What a SQLite database is made of, read from `sqlite_schema` and the schema pragmas only:
 * reading them runs none of the database's views or triggers, so a restore can compare a
 * backup it does not trust against the database this build's migrations make (decision 38).
 */
export interface SchemaShape {
  readonly encoding: string;
  readonly objects: ReadonlyMap<string, SchemaObject>;
}

interface SchemaObject {
  readonly type: string;
  readonly name: string;
  /** The table an index or trigger belongs to. */
  readonly table: string;
  /** The statement that made it, as SQLite keeps it; null for the indexes of constraints. */
  readonly sql: string | null;
  /** For a table: its columns (type, NOT NULL, default, key), in order. */
  readonly columns: ReadonlyMap<string, string>;
  /** For an index: its columns and their order and collation, uniqueness, condition. */
  readonly keys: string;
}

/** Runs a read of the database: a SELECT of sqlite_schema or of a pragma's table function. */
export type ReadRows = (sql: string, params?: readonly SqlValue[]) => Promise<readonly Row[]>;
type Row = Readonly<Record<string, unknown>>;

const text = (value: unknown): string => (typeof value === "string" ? value : String(value));

function describeColumn(row: Row): string {
  return [
    text(row.type) || "(no type)",
    row.notnull === 1 ? "NOT NULL" : null,
    row.dflt_value === null ? null : `DEFAULT ${text(row.dflt_value)}`,
    row.pk === 0 ? null : `PRIMARY KEY ${text(row.pk)}`,
    row.hidden === 0 ? null : `hidden ${text(row.hidden)}`,
  ]
    .filter((part) => part !== null)
    .join(" ");
}

async function columnsOf(read: ReadRows, table: string): Promise<Map<string, string>> {
  const rows = await read("SELECT * FROM pragma_table_xinfo(?) ORDER BY cid", [table]);
  return new Map(rows.map((row) => [text(row.name), describeColumn(row)]));
}

async function keysOf(read: ReadRows, index: string, table: string): Promise<string> {
  const [listed] = (await read("SELECT * FROM pragma_index_list(?)", [table])).filter(
    (row) => row.name === index,
  );
  const columns = await read("SELECT * FROM pragma_index_xinfo(?) ORDER BY seqno", [index]);
  return JSON.stringify({
    unique: listed?.unique,
    origin: listed?.origin,
    partial: listed?.partial,
    columns: columns.map((row) => [row.cid, row.name, row.desc, row.coll, row.key]),
  });
}

/** The shape of the database `read` reads. */
export async function readSchemaShape(read: ReadRows): Promise<SchemaShape> {
  const [encoding] = await read("SELECT encoding FROM pragma_encoding");
  const rows = await read("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name");
  const objects = new Map<string, SchemaObject>();
  for (const row of rows) {
    const type = text(row.type);
    const name = text(row.name);
    const table = text(row.tbl_name);
    const sql = row.sql === null ? null : text(row.sql);
    // Pragmas only on what is really a table or an index: asking the columns of a view
    // would compile its query, and a virtual table's would call its module.
    const ordinary = type === "table" && !/^\s*CREATE\s+VIRTUAL\b/i.test(sql ?? "");
    objects.set(name, {
      type: ordinary || type !== "table" ? type : "virtual table",
      name,
      table,
      sql,
      columns: ordinary ? await columnsOf(read, name) : new Map(),
      keys: type === "index" ? await keysOf(read, name, table) : "",
    });
  }
  return { encoding: text(encoding?.encoding), objects };
}

function columnDifferences(table: string, actual: SchemaObject, expected: SchemaObject) {
  const differences: string[] = [];
  for (const [name, shape] of actual.columns) {
    const wanted = expected.columns.get(name);
    if (wanted === undefined) {
      differences.push(`has a column ${table}.${name} that svc does not create`);
    } else if (wanted !== shape) {
      differences.push(`has the column ${table}.${name} as ${shape}, where svc makes ${wanted}`);
    }
  }
  for (const name of expected.columns.keys()) {
    if (!actual.columns.has(name)) differences.push(`lacks the column ${table}.${name}`);
  }
  return differences;
}

function objectDifferences(actual: SchemaObject, expected: SchemaObject): string[] {
  const { type, name } = expected;
  if (actual.type !== type) return [`has a ${actual.type} ${name} where svc makes a ${type}`];
  if (actual.table !== expected.table) {
    return [`has the ${type} ${name} on ${actual.table}, where svc makes it on ${expected.table}`];
  }
  const columns = columnDifferences(name, actual, expected);
  if (columns.length > 0) return columns;
  if (actual.keys !== expected.keys) {
    return [`has the index ${name} on other columns, order or condition than svc makes it`];
  }
  // What the pragmas do not show (a CHECK, a collation, a foreign key's action, the order of
  // the columns) is in the statement: the same migrations write the same text.
  if (actual.sql !== expected.sql) {
    return [
      `defines the ${type} ${name} otherwise than svc does (a constraint, a default, a collation or the order of its columns)`,
    ];
  }
  return [];
}

/** Whether the object `name` is the same in both (present in both, of the same shape). */
export function sameObject(actual: SchemaShape, expected: SchemaShape, name: string): boolean {
  const [mine, wanted] = [actual.objects.get(name), expected.objects.get(name)];
  return mine !== undefined && wanted !== undefined && objectDifferences(mine, wanted).length === 0;
}

/**
 * How the database `actual` differs from `expected`, one phrase per difference ("has a
 * trigger x that svc does not create"); empty when they are the same. Every object counts:
 * a trigger, view or table that is not svc's would run, or be read, as if it were.
 */
export function schemaDifferences(actual: SchemaShape, expected: SchemaShape): string[] {
  const differences: string[] = [];
  if (actual.encoding !== expected.encoding) {
    differences.push(`is encoded in ${actual.encoding}, where svc uses ${expected.encoding}`);
  }
  for (const object of actual.objects.values()) {
    const wanted = expected.objects.get(object.name);
    differences.push(
      ...(wanted === undefined
        ? [`has a ${object.type} ${object.name} that svc does not create`]
        : objectDifferences(object, wanted)),
    );
  }
  for (const object of expected.objects.values()) {
    if (!actual.objects.has(object.name))
      differences.push(`lacks the ${object.type} ${object.name}`);
  }
  return differences;
}
