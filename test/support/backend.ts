/**
 * The backend the whole run uses: `SVC_TEST_BACKEND=sqlite` (the default) or `postgres`.
 * `npm test` runs the suite once for each (test/run-tests.ts). A module of its own, without
 * the store, so that files which open no store need not load one to ask.
 */
export type TestBackend = "sqlite" | "postgres";

export const testBackend: TestBackend =
  process.env.SVC_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";

/**
 * The `skip` of a file whose outcome no backend can change (it opens no store: a package
 * install, a thread, a stub API, pure functions): it runs on the SQLite pass only, rather than
 * twice for the same answer. `describe(name, { skip: sqlitePassOnly }, …)`.
 */
export const sqlitePassOnly: string | false =
  testBackend === "sqlite" ? false : "opens no store: runs on the SQLite pass only";
