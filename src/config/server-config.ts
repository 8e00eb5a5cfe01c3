import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { AppError } from "../errors.ts";
import ipaddr from "ipaddr.js";
import { parseByteSize } from "../lib/byte-size.ts";
import { parseDuration } from "../lib/duration.ts";
import { splitList } from "../lib/split-list.ts";
import { parseWebOrigin } from "../lib/web-origin.ts";
import { AddressPolicy } from "../net/address-policy.ts";
import { parseDestinationUrl } from "../net/destination-url.ts";
import { PortSet } from "../net/port-set.ts";
import { isPostgresUrl } from "../store/database-url.ts";

/**
 * The configuration of `svc server` and of the operator commands (`svc admin …`), which open
 * the same database. One schema, one defaults object, one precedence:
 * defaults < config file (--config / SVC_CONFIG, JSON) < environment < command-line flags.
 * Every problem is reported together.
 */

const csv = (value: unknown): unknown => (typeof value === "string" ? splitList(value) : value);

/** A duration such as `50ms`, `5s`, `2m`, `1h` or `1d`, in milliseconds. */
const duration = z.string().transform((text, context) => {
  const ms = parseDuration(text);
  if (ms === null) {
    context.addIssue({
      code: "custom",
      message: "must be a duration such as 500ms, 10s, 2m, 1h or 1d",
    });
    return z.NEVER;
  }
  return ms;
});

/** A size such as `16KiB`, `1MiB` or `512B` (or bytes alone), in bytes: from 1 KiB to 64 MiB. */
const byteSize = z.union([z.string(), z.number()]).transform((value, context) => {
  const bytes = parseByteSize(String(value));
  if (bytes === null || bytes < 1024 || bytes > 64 * 1024 * 1024) {
    context.addIssue({
      code: "custom",
      message: "must be a size from 1KiB to 64MiB, such as 16KiB or 1MiB",
    });
    return z.NEVER;
  }
  return bytes;
});

/** A duration of more than 0 (a time limit that is never off). */
const positiveDuration = duration.refine((ms) => ms > 0, { message: "must be more than 0" });
/** A web origin (`https://host[:port]`), lower-cased; `*.` subdomains where `wildcard`. */
function webOrigin(wildcard: boolean) {
  return z.string().transform((text, context) => {
    const origin = parseWebOrigin(text, { wildcard });
    if (origin === null) {
      context.addIssue({
        code: "custom",
        message: `must be an origin such as https://app.example.com or http://localhost:3000 (scheme, host${wildcard ? " or *.host" : ""}, optional port; no path)`,
      });
      return z.NEVER;
    }
    return origin;
  });
}

/** JSON text (from the environment) parsed; anything else as it is. */
const jsonText = (value: unknown): unknown => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
};

/** An operations endpoint's URL: the destinations' syntactic rules (https, no userinfo, …). */
const operationsUrl = z.string().transform((text, context) => {
  try {
    return parseDestinationUrl(text).href;
  } catch (error) {
    context.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

/** A signing secret as `svc webhooks create` writes them: `whsec_` and at least 24 characters. */
const signingSecret = z.string().regex(/^whsec_[A-Za-z0-9+/=_-]{24,}$/, {
  message: "must be a signing secret: whsec_ and at least 24 characters (base64 or base64url)",
});

/** A duration from 1 second to `maxMs`. */
function durationUpTo(maxMs: number, max: string) {
  return duration.refine((ms) => ms >= 1000 && ms <= maxMs, {
    message: `must be from 1s to ${max}`,
  });
}

const schema = z
  .strictObject({
    /** Interface the API listens on. Default 127.0.0.1. */
    host: z.string().min(1),
    /** TCP port of the API. Default 8787. */
    port: z.coerce.number().int().min(0).max(65535),
    /** A SQLite file path, or a postgres:// URL. Default: `svc.db` in the data directory. */
    database: z.string().min(1).optional(),
    /** PostgreSQL: connections in each process's pool. Default 10. */
    databasePoolSize: z.coerce.number().int().min(2).max(1000),
    /**
     * How long a batch of publishes or results waits for more while they come faster than
     * that (decision 65): more calls share a commit, for up to this much more latency. `0ms`
     * turns it off. Default 2ms on PostgreSQL, 0ms on SQLite (`defaultBatchLingerMs`, decision
     * 68); at most 100ms.
     */
    batchLinger: duration
      .refine((ms) => ms <= 100, { message: "must be at most 100ms" })
      .optional(),
    /**
     * What `svc server` runs: `all` (API, delivery worker and maintenance; the default),
     * `api` (the HTTP API alone) or `worker` (worker and maintenance, with a listener that
     * answers only /healthz and /readyz).
     */
    role: z.enum(["all", "api", "worker"]),
    /** Where the SQLite database and the generated encryption key live. */
    dataDir: z.string().min(1),
    /** 32 bytes, base64: encrypts signing secrets at rest. Default: a key file in the data dir. */
    encryptionKey: z.string().min(1).optional(),
    /** CIDR ranges that destinations may reach although private. Development and tests only. */
    allowPrivateNetworks: z.preprocess(
      csv,
      z.array(
        z.string().refine((cidr) => AddressPolicy.isValidCidr(cidr), {
          message: "must be CIDR ranges such as 127.0.0.0/8 or ::1/128",
        }),
      ),
    ),
    /**
     * The ports a destination on a public host may use: ports and ranges, such as
     * `443,8443,1024-65535`. Allowlisted ranges (`allowPrivateNetworks`) may use any port.
     * Default 443,8443 (decision 26).
     */
    destinationPorts: z.preprocess(
      csv,
      z
        .array(
          z.string().refine((entry) => PortSet.isValidEntry(entry), {
            message: "must be ports (1 to 65535) and ranges such as 443,8443,1024-65535",
          }),
        )
        .min(1, { message: "must allow at least one port" }),
    ),
    /**
     * Fixed answers for host names, like /etc/hosts: `name=address` entries, comma-separated;
     * repeat a name for several addresses. Other names use the system resolver.
     */
    resolve: z.preprocess(
      csv,
      z.array(
        z
          .string()
          .regex(/^[^=\s]+=[^=\s]+$/, { message: "entries must be written name=address" })
          .refine((entry) => ipaddr.isValid(entry.split("=")[1] ?? ""), {
            message: "the address after = must be an IPv4 or IPv6 address",
          }),
      ),
    ),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    /** Waits between attempts after a failure; when spent, the delivery has failed. */
    retrySchedule: z.preprocess(csv, z.array(duration)),
    /** The whole exchange of one attempt: connect, send, answer. Default 10s. */
    deliveryTimeout: positiveDuration,
    /** Deliveries a worker holds at once, across all destinations. Default 256. */
    deliveryConcurrency: z.coerce.number().int().min(1).max(10_000),
    /**
     * Attempts in flight at once to a destination not known to answer fast, per worker; one
     * that answers fast may have half of `deliveryConcurrency`. Default 16.
     */
    destinationConcurrency: z.coerce.number().int().min(1).max(10_000),
    /** Deliveries of one workspace a worker holds at once. Default 128. */
    workspaceConcurrency: z.coerce.number().int().min(1).max(10_000),
    /** Destination failures in a row (time-outs, refusals, 429, 5xx) that open its circuit. Default 10. */
    circuitThreshold: z.coerce.number().int().min(1).max(1_000_000),
    /** How long a worker's claim holds; must exceed the timeout. Default 60s. */
    deliveryLease: duration,
    /** How long attempt records are kept. Default 30d. */
    attemptRetention: duration,
    /** How long events and their finished deliveries are kept. Default 30d. */
    eventRetention: duration,
    /**
     * Users reach the server over https through a TLS-terminating proxy: the dashboard's
     * session cookie is then marked Secure (it is whenever the request itself came over TLS).
     * Default false.
     */
    behindTls: z.preprocess(
      (value) => (value === "true" ? true : value === "false" ? false : value),
      z.boolean({ error: "must be true or false" }),
    ),
    /**
     * Send each delivery attempt's W3C `traceparent` header to the receiver, so that its own
     * traces continue the attempt's. Needs tracing on (an `OTEL_EXPORTER_OTLP_…ENDPOINT`);
     * tells receivers svc's trace ids. Default false (decision 47).
     */
    propagateTraceContext: z.preprocess(
      (value) => (value === "true" ? true : value === "false" ? false : value),
      z.boolean({ error: "must be true or false" }),
    ),
    /** How long a session from `svc auth login` lasts before signing in again. Default 30d. */
    sessionTtl: positiveDuration,
    /** How long a listen session is kept after its stream was last connected. Default 72h. */
    listenSessionTtl: positiveDuration,
    /** How often a listen stream carries a heartbeat. Default 15s. */
    listenHeartbeat: duration.refine((ms) => ms >= 100, { message: "must be at least 100ms" }),
    /** The largest request body of every route but publishing an event. Default 16KiB. */
    requestBodyLimit: byteSize,
    /** The largest body of a publish (`POST …/events`). Default 256KiB. */
    eventBodyLimit: byteSize,
    /** How deeply an event's `data.object` may nest objects and arrays. Default 32. */
    eventDepthLimit: z.coerce.number().int().min(1).max(1000),
    /**
     * Webhook destinations a workspace may have (listen sessions are bounded apart, at 20).
     * Default 1000 (decision 39).
     */
    destinationLimit: z.coerce.number().int().min(1).max(1_000_000),
    /**
     * Webhook destinations one event may reach: a publish that would reach more is refused,
     * nothing written. Default 1000, as destinationLimit (decision 39).
     */
    eventFanOutLimit: z.coerce.number().int().min(1).max(1_000_000),
    /**
     * The whole request, headers and body, must have arrived within this of its first byte;
     * else 408 and the connection is closed (decision 37). Default 30s.
     */
    requestTimeout: positiveDuration,
    /** The request's headers must have arrived within this; at most `requestTimeout`. Default 10s. */
    headersTimeout: positiveDuration,
    /** A connection waiting for its next request is closed after this. Default 72s. */
    keepAliveTimeout: positiveDuration,
    /**
     * A connection on which no byte moves either way for this long, during a request or its
     * answer, is closed (a listen stream's own bound is twice its heartbeat if longer). Default 60s.
     */
    idleTimeout: positiveDuration,
    /** Connections open at once, in all; one more is closed as it arrives. Default 4096. */
    connectionLimit: z.coerce.number().int().min(1).max(1_000_000),
    /**
     * Connections open at once from one IPv4 address or IPv6 /64; 0 for no such limit (behind
     * a reverse proxy, where every connection comes from the proxy). Default 256.
     */
    connectionLimitPerIp: z.coerce.number().int().min(0).max(1_000_000),
    /**
     * Requests per second one client may send, on average: each API key, session or portal
     * session, and each address (IPv4, or IPv6 /64) for requests without credentials. Past its
     * budget a request is answered 429 `too_many_requests` with Retry-After, before any
     * database work. Probes, /metrics and listen streams are exempt. 0: no budget. Default 100
     * (decision 45).
     */
    requestRate: z.coerce.number().min(0).max(1_000_000),
    /** Requests one client may send at once above `requestRate` (the bucket's size). Default 200. */
    requestBurst: z.coerce.number().int().min(1).max(1_000_000),
    /**
     * Where browsers reach this server (`https://webhooks.example.com`): portal links are made
     * with it. Default: the origin the link's request came to.
     */
    publicUrl: webOrigin(false).optional(),
    /**
     * The origins that may show the customer portal in an iframe (CSP `frame-ancestors` of
     * `/ui/portal` alone). Default none: no site may frame it (decision 43).
     */
    portalFrameAncestors: z.preprocess(csv, z.array(webOrigin(true))),
    /** How long a portal link stays unopened before it dies. Default 5m, at most 1h. */
    portalLinkTtl: durationUpTo(3_600_000, "1h"),
    /** How long a portal session lasts from the link's opening. Default 1h, at most 24h. */
    portalSessionTtl: durationUpTo(86_400_000, "24h"),
    /** The product name the portal shows. Default "Webhooks". */
    portalProductName: z
      .string()
      .trim()
      .min(1)
      .max(60)
      // eslint-disable-next-line no-control-regex -- control characters are what it refuses
      .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, { message: "must not contain control characters" })
      .optional(),
    /** The portal's accent colour, `#rrggbb`. Default the dashboard's blue. */
    portalAccentColor: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, { message: "must be a colour written #rrggbb, such as #0b57d0" })
      .optional(),
    /** The portal's theme: `light` or `dark`. Default light. */
    portalTheme: z.enum(["light", "dark"]),
    /**
     * An operations endpoint (decision 48): an https URL, under the destinations' network
     * policy, that receives the operator's notices (`destination.failing`, …). Needs
     * `operationsSecret`. Default none.
     */
    operationsUrl: operationsUrl.optional(),
    /** The `whsec_…` secret that signs the notices to `operationsUrl`. */
    operationsSecret: signingSecret.optional(),
    /**
     * More operations endpoints, or all of them: a JSON array of `{"url","secret"}` (in the
     * file, an array). Each gets every notice. Default none.
     */
    operationsEndpoints: z.preprocess(
      jsonText,
      z.array(z.strictObject({ url: operationsUrl, secret: signingSecret })),
    ),
    /** The least time between two `destination.failing` of one destination. Default 1h. */
    failingNoticeInterval: duration,
  })
  .refine(
    (config) => (config.operationsUrl === undefined) === (config.operationsSecret === undefined),
    {
      path: ["operationsSecret"],
      message: "operationsUrl and operationsSecret are set together, or neither",
    },
  )
  .refine((config) => config.deliveryLease > config.deliveryTimeout, {
    path: ["deliveryLease"],
    message: "must be longer than the delivery timeout",
  })
  // Node refuses a server whose headers may take longer than the whole request.
  .refine((config) => config.headersTimeout <= config.requestTimeout, {
    path: ["headersTimeout"],
    message: "must be at most the request timeout",
  })
  .transform((config) => ({
    ...config,
    batchLinger: config.batchLinger ?? defaultBatchLingerMs(isPostgresUrl(config.database ?? "")),
  }));

export type ServerConfig = Readonly<z.infer<typeof schema>>;

/** Where configuration comes from; each source may leave anything out. */
export interface ConfigSources {
  readonly env: NodeJS.ProcessEnv;
  /** Command-line flags, already named as in the schema. */
  readonly flags: Partial<Record<keyof ServerConfig | "config", unknown>>;
}

function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const xdgDataHome = env.XDG_DATA_HOME;
  const base =
    xdgDataHome !== undefined && isAbsolute(xdgDataHome)
      ? xdgDataHome
      : join(homedir(), ".local", "share");
  return join(base, "svc");
}

function defaults(env: NodeJS.ProcessEnv): Record<string, unknown> {
  return {
    host: "127.0.0.1",
    port: 8787,
    databasePoolSize: 10,
    role: "all",
    dataDir: defaultDataDir(env),
    allowPrivateNetworks: [],
    destinationPorts: "443,8443",
    resolve: [],
    logLevel: "info",
    retrySchedule: "5s,30s,2m,10m,30m,1h,2h,4h,8h,12h,24h,24h",
    deliveryTimeout: "10s",
    deliveryConcurrency: 256,
    destinationConcurrency: 16,
    workspaceConcurrency: 128,
    circuitThreshold: 10,
    deliveryLease: "60s",
    attemptRetention: "30d",
    eventRetention: "30d",
    sessionTtl: "30d",
    listenSessionTtl: "72h",
    listenHeartbeat: "15s",
    behindTls: false,
    propagateTraceContext: false,
    requestBodyLimit: "16KiB",
    eventBodyLimit: "256KiB",
    eventDepthLimit: 32,
    destinationLimit: 1000,
    eventFanOutLimit: 1000,
    requestTimeout: "30s",
    headersTimeout: "10s",
    keepAliveTimeout: "72s",
    idleTimeout: "60s",
    connectionLimit: 4096,
    connectionLimitPerIp: 256,
    requestRate: 100,
    requestBurst: 200,
    portalFrameAncestors: [],
    portalLinkTtl: "5m",
    portalSessionTtl: "1h",
    portalTheme: "light",
    operationsEndpoints: [],
    failingNoticeInterval: "1h",
  };
}

/** The environment variable of each setting; docs/configuration.md's table lists them all. */
export const environmentNames: Record<keyof ServerConfig, string> = {
  host: "SVC_HOST",
  port: "SVC_PORT",
  database: "SVC_DATABASE_URL",
  databasePoolSize: "SVC_DATABASE_POOL_SIZE",
  batchLinger: "SVC_BATCH_LINGER",
  role: "SVC_ROLE",
  dataDir: "SVC_DATA_DIR",
  encryptionKey: "SVC_ENCRYPTION_KEY",
  allowPrivateNetworks: "SVC_ALLOW_PRIVATE_NETWORKS",
  destinationPorts: "SVC_DESTINATION_PORTS",
  resolve: "SVC_RESOLVE",
  logLevel: "SVC_LOG_LEVEL",
  retrySchedule: "SVC_RETRY_SCHEDULE",
  deliveryTimeout: "SVC_DELIVERY_TIMEOUT",
  deliveryConcurrency: "SVC_DELIVERY_CONCURRENCY",
  destinationConcurrency: "SVC_DESTINATION_CONCURRENCY",
  workspaceConcurrency: "SVC_WORKSPACE_CONCURRENCY",
  circuitThreshold: "SVC_CIRCUIT_THRESHOLD",
  deliveryLease: "SVC_DELIVERY_LEASE",
  attemptRetention: "SVC_ATTEMPT_RETENTION",
  eventRetention: "SVC_EVENT_RETENTION",
  sessionTtl: "SVC_SESSION_TTL",
  listenSessionTtl: "SVC_LISTEN_SESSION_TTL",
  listenHeartbeat: "SVC_LISTEN_HEARTBEAT",
  behindTls: "SVC_BEHIND_TLS",
  propagateTraceContext: "SVC_PROPAGATE_TRACE_CONTEXT",
  requestBodyLimit: "SVC_REQUEST_BODY_LIMIT",
  eventBodyLimit: "SVC_EVENT_BODY_LIMIT",
  eventDepthLimit: "SVC_EVENT_DEPTH_LIMIT",
  destinationLimit: "SVC_DESTINATION_LIMIT",
  eventFanOutLimit: "SVC_EVENT_FAN_OUT_LIMIT",
  requestTimeout: "SVC_REQUEST_TIMEOUT",
  headersTimeout: "SVC_HEADERS_TIMEOUT",
  keepAliveTimeout: "SVC_KEEP_ALIVE_TIMEOUT",
  idleTimeout: "SVC_IDLE_TIMEOUT",
  connectionLimit: "SVC_CONNECTION_LIMIT",
  connectionLimitPerIp: "SVC_CONNECTION_LIMIT_PER_IP",
  requestRate: "SVC_REQUEST_RATE",
  requestBurst: "SVC_REQUEST_BURST",
  publicUrl: "SVC_PUBLIC_URL",
  portalFrameAncestors: "SVC_PORTAL_FRAME_ANCESTORS",
  portalLinkTtl: "SVC_PORTAL_LINK_TTL",
  portalSessionTtl: "SVC_PORTAL_SESSION_TTL",
  portalProductName: "SVC_PORTAL_PRODUCT_NAME",
  portalAccentColor: "SVC_PORTAL_ACCENT_COLOR",
  portalTheme: "SVC_PORTAL_THEME",
  operationsUrl: "SVC_OPERATIONS_URL",
  operationsSecret: "SVC_OPERATIONS_SECRET",
  operationsEndpoints: "SVC_OPERATIONS_ENDPOINTS",
  failingNoticeInterval: "SVC_FAILING_NOTICE_INTERVAL",
};

function fromEnvironment(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(environmentNames)) {
    const value = env[name];
    if (value !== undefined && value !== "") values[key] = value;
  }
  return values;
}

function fromFile(path: string | undefined): Record<string, unknown> {
  if (path === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new AppError(
      "invalid_config",
      `The configuration file ${path} could not be read as JSON.`,
      {
        cause: error,
      },
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AppError("invalid_config", `The configuration file ${path} must hold a JSON object.`);
  }
  return parsed as Record<string, unknown>;
}

function withoutUndefined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}

/**
 * `batchLinger` when none is set (decision 68): 2 ms on PostgreSQL, where each statement's
 * start, round trip and WAL flush are worth sharing (decision 65); 0 on SQLite, whose batches
 * gather the calls already made without a timer, and whose linger cost more latency and
 * throughput than it saved CPU.
 */
function defaultBatchLingerMs(postgres: boolean): number {
  return postgres ? 2 : 0;
}

export function loadServerConfig(sources: ConfigSources): ServerConfig {
  const { config: configFlag, ...flags } = sources.flags;
  const configFile = (configFlag ?? sources.env.SVC_CONFIG) as string | undefined;
  const merged = {
    ...defaults(sources.env),
    ...fromFile(configFile),
    ...fromEnvironment(sources.env),
    ...withoutUndefined(flags),
  };
  const result = schema.safeParse(merged);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const [key = "", ...rest] = issue.path.map(String);
      const source =
        (environmentNames as Partial<Record<string, string>>)[key] ?? "unknown setting";
      const where = rest.length > 0 ? ` entry ${Number(rest[0]) + 1}` : "";
      return `  ${key} (${source})${where}: ${issue.message}`;
    });
    throw new AppError("invalid_config", `The configuration is not valid:\n${problems.join("\n")}`);
  }
  return Object.freeze({ ...result.data, dataDir: resolve(result.data.dataDir) });
}

/** The database to open: the configured one, else `svc.db` in the data directory. */
export function databaseLocation(config: ServerConfig): string {
  return config.database ?? join(config.dataDir, "svc.db");
}

/** Every operations endpoint the settings give: `operationsUrl` first, then `operationsEndpoints`. */
export function operationsEndpointsOf(
  config: ServerConfig,
): { readonly url: string; readonly secret: string }[] {
  const single =
    config.operationsUrl === undefined || config.operationsSecret === undefined
      ? []
      : [{ url: config.operationsUrl, secret: config.operationsSecret }];
  return [...single, ...config.operationsEndpoints];
}

/** The `resolve` entries as a table of name → addresses. */
export function resolveTable(config: ServerConfig): Map<string, string[]> {
  const table = new Map<string, string[]>();
  for (const entry of config.resolve) {
    const [name = "", address = ""] = entry.split("=");
    table.set(name, [...(table.get(name) ?? []), address]);
  }
  return table;
}
