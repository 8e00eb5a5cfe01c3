import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson, type ErrorJson } from "../support/api.ts";
import { createUser, signIn, type TestUser } from "../support/auth.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createWorkspace, type Workspace } from "../support/server.ts";

const ALL_SCOPES = ["webhooks:read", "webhooks:write", "events:read", "events:write"];

describe("users, roles and sessions (API)", () => {
  let fixture: ServerFixture;
  let other: Workspace;
  let base: string;
  let existing: DestinationJson;

  before(async () => {
    fixture = await serverFixture();
    other = await createWorkspace(fixture.server);
    base = `/v1/workspaces/${fixture.owner.id}/webhooks`;
    const created = await apiClient(fixture.server.url, fixture.owner.key).post<DestinationJson>(
      base,
      { url: "https://public.example.test/" },
    );
    existing = created.body;
  });
  after(() => fixture.dispose());

  const as = (token: string) => apiClient(fixture.server.url, token);

  it("signing in issues an svs_ session token with the user's workspaces, roles and scopes", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "member");
    const signedIn = await signIn(fixture.server, user);
    assert.match(signedIn.token, /^svs_[A-Za-z0-9_-]{43}$/);
    assert.equal(signedIn.user.email, user.email);
    const days = (Date.parse(signedIn.expires_at) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in 30 days, not ${days}`);
    assert.deepEqual(signedIn.workspaces, [
      { id: fixture.owner.id, name: "Default", role: "member", scopes: ALL_SCOPES },
    ]);
  });

  it("e-mail addresses are compared without regard to case", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "viewer");
    await signIn(fixture.server, { ...user, email: user.email.toUpperCase() });
  });

  it("a wrong password and an unknown e-mail get the same 401 invalid_credentials", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "member");
    const anonymous = apiClient(fixture.server.url, null);
    const wrongPassword = await anonymous.post<ErrorJson>("/v1/auth/sessions", {
      email: user.email,
      password: "not the password at all",
    });
    const unknownEmail = await anonymous.post<ErrorJson>("/v1/auth/sessions", {
      email: "nobody@example.com",
      password: "not the password at all",
    });
    assert.equal(wrongPassword.status, 401);
    assert.equal(unknownEmail.status, 401);
    assert.deepEqual(wrongPassword.body, unknownEmail.body);
    assert.equal(wrongPassword.body.error.code, "invalid_credentials");
  });

  it("GET /v1/auth/session says who a session or an API key is", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "viewer");
    const { token } = await signIn(fixture.server, user);
    const session = await as(token).get<{ kind: string; user: { email: string } }>(
      "/v1/auth/session",
    );
    assert.equal(session.status, 200, session.text);
    assert.equal(session.body.kind, "session");
    assert.equal(session.body.user.email, user.email);

    const key = await as(fixture.owner.key).get<{
      kind: string;
      user: null;
      workspaces: { id: string; role: null; scopes: string[] }[];
    }>("/v1/auth/session");
    assert.equal(key.body.kind, "api_key");
    assert.equal(key.body.user, null);
    assert.deepEqual(
      key.body.workspaces.map((workspace) => workspace.id),
      [fixture.owner.id],
    );
  });

  it("a viewer can list and get but not create, update or delete", async () => {
    const viewer = await createUser(fixture.server, fixture.owner.id, "viewer");
    const client = as((await signIn(fixture.server, viewer)).token);
    assert.equal((await client.get(base)).status, 200);
    assert.equal((await client.get(`${base}/${existing.id}`)).status, 200);
    for (const response of [
      await client.post<ErrorJson>(base, { url: "https://public.example.test/" }),
      await client.patch<ErrorJson>(`${base}/${existing.id}`, { active: false }),
      await client.delete<ErrorJson>(`${base}/${existing.id}`),
      await client.post<ErrorJson>(`/v1/workspaces/${fixture.owner.id}/events`, {
        type: "job.completed",
        data: { object: {} },
      }),
    ]) {
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.error.code, "insufficient_scope");
    }
  });

  it("a member and an owner can create, update and delete", async () => {
    for (const role of ["member", "owner"] as const) {
      const user = await createUser(fixture.server, fixture.owner.id, role);
      const client = as((await signIn(fixture.server, user)).token);
      const created = await client.post<DestinationJson>(base, {
        url: "https://public.example.test/",
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id;
      assert.equal((await client.patch(`${base}/${id}`, { active: false })).status, 200);
      assert.equal((await client.delete(`${base}/${id}`)).status, 200);
    }
  });

  it("a member of one workspace gets 403 workspace_forbidden in another", async () => {
    const member = await createUser(fixture.server, fixture.owner.id, "member");
    const client = as((await signIn(fixture.server, member)).token);
    const response = await client.get<ErrorJson>(`/v1/workspaces/${other.id}/webhooks`);
    assert.equal(response.status, 403);
    assert.equal(response.body.error.code, "workspace_forbidden");
  });

  it("a role in a second workspace applies there only", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "viewer");
    await createUser(fixture.server, other.id, "member", user.email);
    const client = as((await signIn(fixture.server, user)).token);
    const here = await client.post<ErrorJson>(base, { url: "https://public.example.test/" });
    assert.equal(here.status, 403);
    const there = await client.post(`/v1/workspaces/${other.id}/webhooks`, {
      url: "https://public.example.test/",
    });
    assert.equal(there.status, 201, there.text);
  });

  it("signing out revokes the session: it is 401 from then on", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "member");
    const client = as((await signIn(fixture.server, user)).token);
    const revoked = await client.delete<{ revoked: boolean }>("/v1/auth/session");
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(revoked.body.revoked, true);
    const response = await client.get<ErrorJson>(base);
    assert.equal(response.status, 401);
    assert.equal(response.body.error.code, "unauthenticated");
    assert.match(response.body.error.message, /svc auth login/);
  });

  it("an API key cannot be signed out like a session", async () => {
    const response = await as(fixture.owner.key).delete<ErrorJson>("/v1/auth/session");
    assert.equal(response.status, 400);
    assert.equal((await as(fixture.owner.key).get(base)).status, 200, "the key still works");
  });

  it("a session token unknown to the server is 401", async () => {
    const response = await as(`svs_${"A".repeat(43)}`).get<ErrorJson>(base);
    assert.equal(response.status, 401);
    assert.equal(response.body.error.code, "unauthenticated");
  });
});

describe("session lifetime (SVC_SESSION_TTL)", () => {
  let fixture: ServerFixture;
  let user: TestUser;

  before(async () => {
    fixture = await serverFixture({ SVC_SESSION_TTL: "1s" });
    user = await createUser(fixture.server, fixture.owner.id, "member");
  });
  after(() => fixture.dispose());

  it("an expired session is 401", async () => {
    const signedIn = await signIn(fixture.server, user);
    const client = apiClient(fixture.server.url, signedIn.token);
    const path = `/v1/workspaces/${fixture.owner.id}/webhooks`;
    assert.equal((await client.get(path)).status, 200);
    // Time is what expires a session; wait until the moment the server named has passed.
    const wait = Date.parse(signedIn.expires_at) - Date.now() + 50;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
    const response = await client.get<ErrorJson>(path);
    assert.equal(response.status, 401);
    assert.match(response.body.error.message, /expired/);
  });
});
