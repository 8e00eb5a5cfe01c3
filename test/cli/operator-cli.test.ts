import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { hashToken, newOperatorToken } from "../../src/crypto/tokens.ts";
import { ExitStatus } from "../../src/errors.ts";
import { OPERATOR_SCOPES, SCOPES, type KeyScope } from "../../src/interfaces.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";
import { runCliInMemory, type CliRun } from "../support/in-memory-cli.ts";
import { isolatedConfigHome } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

interface Envelope<T> {
  ok: boolean;
  data: T;
  error: { code: string; message: string; status: number | null };
}
interface WorkspaceJson {
  id: string;
  name: string;
  external_id: string | null;
  metadata: Record<string, string>;
}
interface KeyJson {
  id: string;
  scopes: string[];
  name: string | null;
  key_file?: string;
}

const envelope = <T>(run: CliRun): Envelope<T> => JSON.parse(run.stdout) as Envelope<T>;

function assertStatus(run: CliRun, status: number): void {
  assert.equal(
    run.status,
    status,
    `exit ${run.status}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
  );
}

/** The operator's remote commands (issue 29, decision 42) against the API in this process. */
describe("svc workspaces, svc keys: the operator's CLI over the platform API", () => {
  let api: InProcessApi;
  let url: string;
  let dir: { path: string; cleanup: () => Promise<void> };
  let operatorToken: string;
  let files = 0;

  /** An operator key with `scopes`, as `svc admin keys create --operator` records one. */
  const operatorKey = async (scopes: readonly KeyScope[]): Promise<string> => {
    const token = newOperatorToken();
    files += 1;
    await api.store.credentials.createApiKey({
      id: `key_op${files}`,
      workspaceId: null,
      tokenHash: hashToken(token),
      scopes,
    });
    return token;
  };
  const svc = (args: readonly string[], token = operatorToken, env: NodeJS.ProcessEnv = {}) =>
    runCliInMemory(args, {
      env: {
        SERVICE_API_URL: url,
        SERVICE_API_KEY: token,
        XDG_CONFIG_HOME: isolatedConfigHome,
        ...env,
      },
    });
  const newPath = () => {
    files += 1;
    return join(dir.path, `key-${files}.txt`);
  };
  /** What a workspace key may do in its workspace: read its destinations. */
  const listDestinations = (workspace: string, token: string) =>
    api.app.inject({
      method: "GET",
      url: `/v1/workspaces/${workspace}/webhooks`,
      headers: { authorization: `Bearer ${token}` },
    });

  before(async () => {
    api = await inProcessApi();
    await api.app.listen({ port: 0, host: "127.0.0.1" });
    url = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    dir = await tempDir();
    operatorToken = await operatorKey([...OPERATOR_SCOPES, ...SCOPES]);
  });
  after(async () => {
    await api.dispose();
    await dir.cleanup();
  });

  it("provisions a tenant: workspace, key in a 0600 file never printed, list, revoke, delete with everything in it", async () => {
    const created = await svc([
      "workspaces",
      "create",
      "--name",
      "Acme Corp",
      "--external-id",
      "cus_flow",
      "--metadata",
      "plan=pro",
      "--metadata",
      "note=a=b",
      "--json",
    ]);
    assertStatus(created, 0);
    const workspace = envelope<WorkspaceJson>(created).data;
    assert.equal(workspace.name, "Acme Corp");
    assert.equal(workspace.external_id, "cus_flow");
    assert.deepEqual(workspace.metadata, { plan: "pro", note: "a=b" });

    const found = await svc(["workspaces", "list", "--external-id", "cus_flow", "--field", "id"]);
    assertStatus(found, 0);
    assert.equal(found.stdout, `${workspace.id}\n`);

    const keyFile = newPath();
    const minted = await svc([
      "keys",
      "create",
      "--workspace",
      workspace.id,
      "--scopes",
      "webhooks:write,webhooks:read",
      "--name",
      "backend",
      "--expires-in",
      "30d",
      "--output",
      keyFile,
      "--json",
    ]);
    assertStatus(minted, 0);
    const token = (await readFile(keyFile, "utf8")).trimEnd();
    assert.match(token, /^svc_/);
    assert.doesNotMatch(token, /^svc_op_/);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    assert.ok(!minted.stdout.includes(token) && !minted.stderr.includes(token));
    const key = envelope<KeyJson & { token?: unknown; expires_at: string }>(minted).data;
    assert.equal(key.token, undefined);
    assert.equal(key.key_file, keyFile);
    assert.deepEqual(key.scopes.toSorted(), ["webhooks:read", "webhooks:write"]);
    const days = (Date.parse(key.expires_at) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
    assert.match(minted.stderr, /saved to .*mode 0600/);

    // The raw answer has its token taken out too.
    const rawFile = newPath();
    const raw = await svc([
      "keys",
      "create",
      "--workspace",
      workspace.id,
      "--scopes",
      "events:read",
      "--output",
      rawFile,
      "--raw",
    ]);
    assertStatus(raw, 0);
    const rawToken = (await readFile(rawFile, "utf8")).trimEnd();
    assert.ok(!raw.stdout.includes(rawToken));
    assert.match(raw.stdout, /"token":"\[redacted\]"/);

    // The key works in its workspace: it registers a destination there.
    const registered = await api.app.inject({
      method: "POST",
      url: `/v1/workspaces/${workspace.id}/webhooks`,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      payload: JSON.stringify({ url: `https://${publicTestHost}/acme` }),
    });
    assert.equal(registered.statusCode, 201, registered.body);

    const listed = await svc(["keys", "list", "--workspace", workspace.id, "--json"]);
    assertStatus(listed, 0);
    const keys = envelope<Record<string, unknown>[]>(listed).data;
    assert.deepEqual(keys.map((item) => item.id).toSorted(), [key.id, keys[0]?.id].toSorted());
    assert.equal(keys.length, 2);
    assert.ok(keys.every((item) => !("token" in item)));
    assert.ok(!listed.stdout.includes(token));
    const table = await svc(["keys", "list", "--workspace", workspace.id]);
    assert.match(table.stdout, /^ID\s+SCOPES\s+NAME\s+CREATED_AT\s+EXPIRES_AT\s+LAST_USED_AT\n/);
    assert.match(table.stdout, new RegExp(`${key.id}\\s+webhooks:write,webhooks:read\\s+backend`));

    const revoked = await svc(["keys", "revoke", key.id, "--workspace", workspace.id, "--json"]);
    assertStatus(revoked, 0);
    assert.deepEqual(envelope(revoked).data, { id: key.id, deleted: true });
    assert.equal((await listDestinations(workspace.id, token)).statusCode, 401);

    // Not without --cascade while it has a destination; not without --yes off a terminal.
    const refused = await svc(["workspaces", "delete", workspace.id, "--yes"]);
    assertStatus(refused, ExitStatus.rejected);
    assert.match(
      refused.stderr,
      /still has destinations\..* svc workspaces delete ws_\w+ --cascade\. \(workspace_not_empty\)\n$/,
    );
    const unconfirmed = await svc(["workspaces", "delete", workspace.id, "--cascade"]);
    assertStatus(unconfirmed, ExitStatus.usage);
    assert.match(unconfirmed.stderr, /no terminal to confirm on\. Pass --yes/);
    const deleted = await svc([
      "workspaces",
      "delete",
      workspace.id,
      "--cascade",
      "--yes",
      "--json",
    ]);
    assertStatus(deleted, 0);
    assert.deepEqual(envelope(deleted).data, { id: workspace.id, deleted: true });

    const gone = await svc(["workspaces", "get", workspace.id, "--json"]);
    assertStatus(gone, ExitStatus.notFound);
    assert.equal(envelope(gone).error.code, "not_found");
    assert.equal(envelope(gone).error.status, 404);
  });

  it("create replays with the same --idempotency-key; get, update and a list page by page", async () => {
    const args = ["workspaces", "create", "--name", "Replay", "--idempotency-key", "signup-42"];
    const first = envelope<WorkspaceJson>(await svc([...args, "--json"])).data;
    const again = envelope<WorkspaceJson>(await svc([...args, "--json"])).data;
    assert.equal(again.id, first.id);

    const renamed = await svc([
      "workspaces",
      "update",
      first.id,
      "--name",
      "Replayed",
      "--metadata",
      "tier=gold",
      "--json",
    ]);
    assertStatus(renamed, 0);
    assert.deepEqual(
      [envelope<WorkspaceJson>(renamed).data.name, envelope<WorkspaceJson>(renamed).data.metadata],
      ["Replayed", { tier: "gold" }],
    );
    const cleared = await svc(["workspaces", "update", first.id, "--clear-metadata", "--json"]);
    assert.deepEqual(envelope<WorkspaceJson>(cleared).data.metadata, {});
    const shown = await svc(["workspaces", "get", first.id]);
    assertStatus(shown, 0);
    assert.match(shown.stdout, /^id: +ws_/m);
    assert.match(
      shown.stdout,
      /^name: +Replayed\nexternal_id: +none\nmetadata: +\{\}\ncreated_at: /m,
    );

    await svc(["workspaces", "create", "--name", "Second"]);
    const page = await svc(["workspaces", "list", "--limit", "1", "--json"]);
    assertStatus(page, 0);
    assert.equal(envelope<unknown[]>(page).data.length, 1);
    assert.match(page.stderr, /add --all to list them all/);
    const all = await svc(["workspaces", "list", "--all", "--field", "id"]);
    assertStatus(all, 0);
    const ids = all.stdout.trimEnd().split("\n");
    assert.ok(ids.length >= 3 && ids.includes(first.id), all.stdout);
    assert.equal(all.stderr, "");
  });

  it("a workspace's key gets the API's 403 operator_key_required, said plainly", async () => {
    const run = await svc(["workspaces", "list"], api.token);
    assertStatus(run, ExitStatus.auth);
    assert.match(
      run.stderr,
      /^error: Only an operator API key may do this .*Set SERVICE_API_KEY to an operator key\. \(operator_key_required\)\n$/,
    );
    const minted = newPath();
    const asJson = await svc(
      [
        "keys",
        "create",
        "--workspace",
        api.workspaceId,
        "--scopes",
        "events:read",
        "--output",
        minted,
        "--json",
      ],
      api.token,
    );
    assertStatus(asJson, ExitStatus.auth);
    assert.equal(envelope(asJson).ok, false);
    assert.equal(envelope(asJson).error.code, "operator_key_required");
    assert.equal(envelope(asJson).error.status, 403);
    await assert.rejects(stat(minted), { code: "ENOENT" }, "no key file is left behind");
    const scopeless = await svc(["workspaces", "list"], await operatorKey(["portal:write"]));
    assertStatus(scopeless, ExitStatus.auth);
  });

  it("--dry-run shows the request, never a token, and makes no file", async () => {
    const keyFile = newPath();
    const run = await svc([
      "keys",
      "create",
      "--workspace",
      api.workspaceId,
      "--scopes",
      "events:write",
      "--output",
      keyFile,
      "--dry-run",
    ]);
    assertStatus(run, 0);
    assert.match(
      run.stdout,
      new RegExp(`^POST ${url}/v1/workspaces/${api.workspaceId}/api-keys\\n`),
    );
    assert.match(run.stdout, /^Authorization: Bearer \[redacted\]$/m);
    assert.match(run.stdout, /^Idempotency-Key: svc-/m);
    assert.match(run.stdout, /\n\{"scopes":\["events:write"\]\}\n$/);
    assert.ok(!run.stdout.includes(operatorToken) && !run.stderr.includes(operatorToken));
    assert.match(run.stderr, /Dry run: nothing was sent/);
    await assert.rejects(stat(keyFile), { code: "ENOENT" });

    const asJson = await svc([
      "workspaces",
      "delete",
      "ws_whatever",
      "--cascade",
      "--dry-run",
      "--json",
    ]);
    assertStatus(asJson, 0);
    const { request } = envelope<{
      request: { method: string; url: string; headers: Record<string, string> };
    }>(asJson).data;
    assert.equal(request.method, "DELETE");
    assert.equal(request.url, `${url}/v1/workspaces/ws_whatever?cascade=true`);
    assert.equal(request.headers.Authorization, "Bearer [redacted]");
  });

  it("usage errors exit 2 with what to do, before anything is sent", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["workspaces", "create"],
        /A workspace needs --name <name>\. See `svc workspaces create --help`/,
      ],
      [
        ["workspaces", "create", "--name", "x", "--metadata", "plan"],
        /--metadata takes key=value \(such as plan=pro\), not "plan"/,
      ],
      [
        ["workspaces", "create", "--name", "x", "--metadata", "a=1", "--metadata", "a=2"],
        /--metadata names "a" twice/,
      ],
      [["workspaces", "list", "--limit", "500"], /--limit must be a whole number from 1 to 100/],
      [["workspaces", "list", "--limit", "5", "--all"], /give one of them/],
      [
        ["workspaces", "update", "ws_1"],
        /Nothing to change: give --name, --metadata key=value or --clear-metadata/,
      ],
      [["workspaces", "get"], /missing required argument 'id'/],
      [
        ["workspaces", "get", "ws_1", "--workspace", "ws_2"],
        /`svc workspaces get` does not take --workspace/,
      ],
      [["keys", "list"], /No workspace selected\. Pass --workspace <id>/],
      [
        ["keys", "create", "--workspace", "ws_1", "--scopes", "events:read"],
        /--output <file> is required/,
      ],
      [
        ["keys", "create", "--workspace", "ws_1", "--scopes", "workspaces:write", "--output", "k"],
        /--scopes takes a comma-separated list of: webhooks:read.*\(unknown: workspaces:write\)/,
      ],
      [
        [
          "keys",
          "create",
          "--workspace",
          "ws_1",
          "--scopes",
          "events:read",
          "--expires-in",
          "soon",
          "--output",
          "k",
        ],
        /--expires-in takes a duration such as 90d/,
      ],
      [["portal-link", "create", "--workspace", "ws_1"], /--role viewer\|member is required/],
      [
        ["portal-link", "create", "--workspace", "ws_1", "--role", "owner"],
        /'owner' is invalid\. Allowed choices are viewer, member/,
      ],
      [
        ["portal-link", "create", "--workspace", "ws_1", "--role", "viewer", "--output", "u.txt"],
        /does not take --output/,
      ],
      [["webhooks", "nope"], /unknown command 'nope'/],
    ];
    for (const [args, message] of cases) {
      const run = await svc(args, operatorToken, { SERVICE_WORKSPACE_ID: "" });
      assertStatus(run, ExitStatus.usage);
      assert.match(run.stderr, message, args.join(" "));
      assert.equal(run.stdout, "", args.join(" "));
    }
    const asJson = await svc(["keys", "create", "--workspace", "ws_1", "--json"]);
    assertStatus(asJson, ExitStatus.usage);
    assert.deepEqual(envelope(asJson), {
      ok: false,
      error: {
        code: "usage_error",
        message: `--scopes <csv> is required: ${SCOPES.join(", ")}. See \`svc keys create --help\`.`,
        status: null,
      },
    });
  });

  it("portal-link create prints the one-time URL alone; portal-sessions end ends what it opened", async () => {
    const run = await svc([
      "portal-link",
      "create",
      "--workspace",
      api.workspaceId,
      "--role",
      "member",
      "--expires-in",
      "10m",
    ]);
    assertStatus(run, 0);
    const match = /^(https?:\/\/[^\s#]+\/ui\/portal#token=(spl_[\w-]+)\S*)\n$/.exec(run.stdout);
    assert.ok(match !== null, run.stdout);
    const [, , linkToken = ""] = match;
    assert.ok(!run.stderr.includes(linkToken), "the token is on stdout only");
    assert.match(run.stderr, /opens the portal once, until \S+; whoever has it gets in/);

    const asJson = await svc([
      "portal-link",
      "create",
      "--workspace",
      api.workspaceId,
      "--role",
      "viewer",
      "--expires-in",
      "90s",
      "--json",
    ]);
    assertStatus(asJson, 0);
    const link = envelope<{ url: string; expires_at: string }>(asJson).data;
    const seconds = (Date.parse(link.expires_at) - Date.now()) / 1000;
    assert.ok(seconds > 80 && seconds <= 90, `expires in ${seconds} s`);

    // The first link opens a session; the second stays unopened: ending counts both.
    const opened = await api.app.inject({
      method: "POST",
      url: "/v1/auth/portal-sessions",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ token: linkToken }),
    });
    assert.equal(opened.statusCode, 201, opened.body);
    const session = (JSON.parse(opened.body) as { token: string }).token;
    assert.equal((await listDestinations(api.workspaceId, session)).statusCode, 200);

    const ended = await svc(["portal-sessions", "end", "--workspace", api.workspaceId]);
    assertStatus(ended, 0);
    assert.equal(ended.stdout, "ended: 2\n");
    assert.equal((await listDestinations(api.workspaceId, session)).statusCode, 401);

    const tooLong = await svc([
      "portal-link",
      "create",
      "--workspace",
      api.workspaceId,
      "--role",
      "viewer",
      "--expires-in",
      "2h",
    ]);
    assertStatus(tooLong, ExitStatus.usage);
    assert.match(tooLong.stderr, /--expires-in may be at most 1h/);
    const asWorkspaceKey = await svc(
      ["portal-sessions", "end", "--workspace", api.workspaceId],
      api.token,
    );
    assertStatus(asWorkspaceKey, ExitStatus.auth);
    assert.match(asWorkspaceKey.stderr, /\(operator_key_required\)\n$/);
  });
});
