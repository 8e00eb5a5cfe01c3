/**
 * A `postgres://` (or `postgresql://`) URL selects PostgreSQL; anything else is a SQLite file
 * path. In a module of its own, so that reading the configuration loads no database driver.
 */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}
