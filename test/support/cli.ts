import assert from "node:assert/strict";
import { createServer } from "node:net";
import { apiClient, type DestinationJson } from "./api.ts";
import type { ServerFixture } from "./fixture.ts";
import type { Workspace } from "./server.ts";
import { runSvc, type SvcRun, type SvcRunOptions } from "./svc.ts";

/** The client settings of `svc webhooks` for a workspace of the fixture's server. */
export function clientEnv(fixture: ServerFixture, workspace: Workspace = fixture.owner) {
  return {
    SERVICE_API_URL: fixture.server.url,
    SERVICE_API_KEY: workspace.key,
    SERVICE_WORKSPACE_ID: workspace.id,
  };
}

/** Runs `svc` against the fixture's server as the owner; `options.env` adds or overrides. */
export function svcAgainst(fixture: ServerFixture) {
  return (args: readonly string[], options: SvcRunOptions = {}): Promise<SvcRun> =>
    runSvc(args, { ...options, env: { ...clientEnv(fixture), ...options.env } });
}

/** A loopback URL where nothing listens: any request to it fails to connect. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  await new Promise<void>((resolve, reject) => {
    server.close((error) => {
      if (error) reject(error);
      else resolve();
    });
  });
  return `http://127.0.0.1:${address.port}`;
}

export interface Envelope<T> {
  readonly ok: boolean;
  readonly data: T;
  readonly error: { code: string; message: string; status: number | null };
}

/** The `--json` document on stdout: exactly one, and nothing else. */
export function envelope<T = unknown>(run: SvcRun): Envelope<T> {
  return JSON.parse(run.stdout) as Envelope<T>;
}

/** Asserts an exit status, showing the output when it differs. */
export function assertExit(run: SvcRun, code: number): void {
  assert.equal(run.code, code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
}

/** Every destination of the workspace, straight from the API (not through `svc`). */
export async function listedDestinations(
  fixture: ServerFixture,
  workspace: Workspace = fixture.owner,
): Promise<DestinationJson[]> {
  const api = apiClient(fixture.server.url, workspace.key);
  const all: DestinationJson[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? "" : `&cursor=${cursor}`;
    const page = await api.get<{ data: DestinationJson[]; next_cursor: string | null }>(
      `/v1/workspaces/${workspace.id}/webhooks?limit=100${query}`,
    );
    assert.equal(page.status, 200, page.text);
    all.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return all;
}

/** Registers a destination through the API directly; returns it with its secret. */
export async function registerDirectly(
  fixture: ServerFixture,
  body: { url: string; events?: string[] },
  workspace: Workspace = fixture.owner,
): Promise<DestinationJson & { secret: string }> {
  const api = apiClient(fixture.server.url, workspace.key);
  const response = await api.post<DestinationJson & { secret: string }>(
    `/v1/workspaces/${workspace.id}/webhooks`,
    body,
  );
  assert.equal(response.status, 201, response.text);
  return response.body;
}
