import { join } from "node:path";
import { initialise, startTestServer, type TestServer, type Workspace } from "./server.ts";
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
