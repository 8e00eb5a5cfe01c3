import assert from "node:assert/strict";
import { apiClient } from "./api.ts";
import type { TestServer } from "./server.ts";
import { runCliInMemory } from "./in-memory-cli.ts";
import { isolatedConfigHome } from "./svc.ts";

/** A password long enough for `svc admin users create`. */
export const PASSWORD = "correct horse battery staple";

export interface TestUser {
  readonly email: string;
  readonly password: string;
}

let users = 0;

/**
 * A user with `role` in `workspaceId`, through `svc admin users create` (the password on
 * standard input). A new e-mail address each time unless `email` is given, when the user may
 * exist already and gains the membership.
 */
export async function createUser(
  server: TestServer,
  workspaceId: string,
  role: "owner" | "member" | "viewer",
  email = `user${(users += 1)}-${process.pid}@example.com`,
): Promise<TestUser> {
  // In this process (the command's own code, without a process of its own to start): a
  // spawned `svc` per user cost most files a second of start-up each.
  const run = await runCliInMemory(
    ["admin", "users", "create", "--email", email, "--workspace", workspaceId, "--role", role],
    {
      env: { HOME: process.env.HOME, XDG_CONFIG_HOME: isolatedConfigHome, ...server.env },
      stdin: `${PASSWORD}\n`,
    },
  );
  assert.equal(run.status, 0, `users create failed: ${run.stdout}${run.stderr}`);
  return { email, password: PASSWORD };
}

export interface SignedInJson {
  token: string;
  expires_at: string;
  user: { id: string; email: string };
  workspaces: { id: string; name: string; role: string; scopes: string[] }[];
}

/** `POST /v1/auth/sessions` for the user; asserts it succeeds and returns the answer. */
export async function signIn(server: TestServer, user: TestUser): Promise<SignedInJson> {
  const response = await apiClient(server.url, null).post<SignedInJson>("/v1/auth/sessions", {
    email: user.email,
    password: user.password,
  });
  assert.equal(response.status, 201, response.text);
  return response.body;
}
