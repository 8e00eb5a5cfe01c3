import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { initialise, startTestServer, type TestServer, type Workspace } from "./server.ts";
import { runSvc } from "./svc.ts";
import { tempDir } from "./temp.ts";

/** A running server with an initialised database, in a directory of its own. */
export interface ServerFixture {
  readonly dir: string;
  readonly server: TestServer;
  readonly owner: Workspace;
  dispose(): Promise<void>;
}

export async function serverFixture(env: NodeJS.ProcessEnv = {}): Promise<ServerFixture> {
  const dir = await tempDir();
  const server = await startTestServer({ dataDir: join(dir.path, "data"), env });
  const owner = await initialise(server);
  return {
    dir: dir.path,
    server,
    owner,
    async dispose() {
      await server.stop();
      await dir.cleanup();
    },
  };
}

let operatorKeys = 0;

/**
 * An operator key (decision 42) made by `svc admin keys create --operator` beside the running
 * server, with `scopes`: its token, read from the new file the command wrote.
 */
export async function operatorKeyOf(fixture: ServerFixture, scopes: string): Promise<string> {
  operatorKeys += 1;
  const keyFile = join(fixture.dir, `operator-${operatorKeys}.key`);
  const made = await runSvc(
    ["admin", "keys", "create", "--operator", "--scopes", scopes, "--output", keyFile],
    { env: fixture.server.env },
  );
  assert.equal(made.code, 0, made.stderr);
  return (await readFile(keyFile, "utf8")).trim();
}
