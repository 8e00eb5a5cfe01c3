import { join } from "node:path";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  InjectOptions,
  LightMyRequestResponse,
} from "fastify";
import { buildApi } from "../../src/api/app.ts";
import { listenSettingsOf } from "../../src/api/listen/settings.ts";
import { portalSettingsOf } from "../../src/api/portal/settings.ts";
import type { ApiLimits } from "../../src/api/dependencies.ts";
import { loadServerConfig } from "../../src/config/server-config.ts";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { hashToken, newApiToken } from "../../src/crypto/tokens.ts";
import { SCOPES, type Clock, type Resolver, type Role, type Scope } from "../../src/interfaces.ts";
import { hashPassword } from "../../src/crypto/passwords.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { PortSet } from "../../src/net/port-set.ts";
import type { Tracing } from "../../src/observability/tracing/tracing.ts";
import { tableResolver } from "../../src/net/resolver.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { SqlStore } from "../../src/store/sql-store.ts";
import { testDatabaseLocation } from "./database.ts";
import { metricsOf } from "./metrics.ts";
import { checkAnswer } from "./openapi-check.ts";
import { tempDir } from "./temp.ts";

/** The API built in this process over a database of its own, answered through `inject()`. */
export interface InProcessApi {
  readonly app: FastifyInstance;
  readonly store: SqlStore;
  readonly workspaceId: string;
  /** An API key of the workspace with every scope. */
  readonly token: string;
  /** Injects a request with the owner key; a `path` without a leading `/v1` is the workspace's. */
  call(
    method: InjectOptions["method"],
    path: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
  /** A new key of the workspace with `scopes`. */
  key(scopes: readonly Scope[]): Promise<string>;
  dispose(): Promise<void>;
}

/** A name that resolves to a public address; nothing here ever connects to it. */
export const publicTestHost = "hooks.test";

/** Tests never ask the system's DNS: a name outside the table does not resolve. */
const noSystemDns: Resolver = {
  resolve: (hostname) => Promise.reject(new Error(`${hostname} is not in the test's table`)),
};

/**
 * Settings as `svc server` takes them (`limits` by their setting names), with the service's
 * defaults otherwise (but no request budget: `requestRate` 0 unless given); `clock` is the
 * store's and the API's; `location` a database to use instead of a new one of the test
 * backend's; `logger` instead of a silent one; `tracing` on.
 */
export async function inProcessApi(
  options: {
    settings?: Record<string, string>;
    clock?: Clock;
    location?: string;
    logger?: FastifyBaseLogger;
    tracing?: Tracing | null;
  } = {},
): Promise<InProcessApi> {
  const dir = await tempDir();
  const config = loadServerConfig({
    env: { SVC_DATA_DIR: join(dir.path, "data") },
    // No request budget unless a test sets one (test/api/request-budget.test.ts): the suite
    // sends thousands of requests with one key on clocks that stand still.
    flags: { requestRate: "0", ...options.settings },
  });
  const db = openDatabase(options.location ?? (await testDatabaseLocation(join(dir.path, "data"))));
  await migrate(db);
  const clock = options.clock ?? { now: () => new Date() };
  const store = new SqlStore(db, clock);
  const workspaceId = "ws_in_process";
  let keys = 0;
  const key = async (scopes: readonly Scope[]): Promise<string> => {
    const token = newApiToken();
    keys += 1;
    await store.credentials.createApiKey({
      id: `key_${keys}`,
      workspaceId,
      tokenHash: hashToken(token),
      scopes,
    });
    return token;
  };
  await store.credentials.createWorkspace({ id: workspaceId, name: "in process" });
  const token = await key(SCOPES);
  const limits: ApiLimits = config;
  const app = buildApi(
    {
      store,
      secretBox: new SecretBox(Buffer.alloc(32, 7)),
      clock,
      resolver: tableResolver(new Map([[publicTestHost, ["93.184.215.14"]]]), noSystemDns),
      addressPolicy: new AddressPolicy(config.allowPrivateNetworks),
      destinationPorts: new PortSet(config.destinationPorts),
      sessionTtlMs: config.sessionTtl,
      behindTls: config.behindTls,
      limits,
      eventRetentionMs: config.eventRetention,
      metrics: metricsOf(store, clock),
      listen: listenSettingsOf(config),
      portal: portalSettingsOf(config),
      tracing: options.tracing ?? null,
    },
    options.logger ?? createLogger("silent"),
  );
  return {
    app,
    store,
    workspaceId,
    token,
    key,
    async call(method, path, callOptions = {}) {
      const url = path.startsWith("/v1") ? path : `/v1/workspaces/${workspaceId}${path}`;
      const { body } = callOptions;
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (body !== undefined) headers["content-type"] = "application/json";
      Object.assign(headers, callOptions.headers);
      // A string is sent as it is (malformed JSON included); anything else as JSON.
      const payload = typeof body === "string" ? body : JSON.stringify(body);
      const response = await app.inject({
        method,
        url,
        headers,
        ...(body === undefined ? {} : { payload }),
      });
      checkAnswer(String(method), url, response.statusCode, response.body);
      return response;
    },
    async dispose() {
      await app.close();
      await store.close();
      await dir.cleanup();
    },
  };
}

let users = 0;

/**
 * A user with `role` in the in-process API's workspace (made on first use of `email`), signed
 * in through `POST /v1/auth/sessions`: their session token.
 */
export async function signInAs(
  api: InProcessApi,
  role: Role,
  email = `user${(users += 1)}@example.com`,
): Promise<{ email: string; token: string }> {
  const password = "correct horse battery staple";
  if ((await api.store.credentials.findUserByEmail(email)) === null) {
    await api.store.credentials.createUser(
      { id: `usr_${users}`, email, passwordHash: await hashPassword(password) },
      { workspaceId: api.workspaceId, role },
    );
  }
  const answer = await api.app.inject({
    method: "POST",
    url: "/v1/auth/sessions",
    payload: { email, password },
  });
  if (answer.statusCode !== 201) throw new Error(`sign-in failed: ${answer.body}`);
  return { email, token: answer.json<{ token: string }>().token };
}
