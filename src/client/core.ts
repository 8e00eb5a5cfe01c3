import type { OperationId } from "../contract/operations.ts";
import { SvcApiError } from "./errors.ts";
import { routes } from "./routes.ts";
import { parseAnswer, Transport, type HttpMethod, type RetryPolicy } from "./transport.ts";
import type { Answer, OperationInput, OperationOutput } from "./types.ts";

export interface ClientOptions {
  /** The API's address: `https://hooks.example.com` (the `/v1` paths are appended). */
  readonly baseUrl: string | URL;
  /** An API key (`sk_…`), an operator key, or a session token; sent as `Authorization: Bearer`. */
  readonly token?: string;
  /** Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
  /** Each try's limit, connection to last byte. Default 30 s. */
  readonly timeoutMs?: number;
  /** Tries in all for a request that is safe to send again (GET, or with a key). Default 3. */
  readonly maxAttempts?: number;
  /** The longest `Retry-After` waited for; a longer one is returned as the error. Default 30 s. */
  readonly maxRetryDelayMs?: number;
  /**
   * Checks each answer against the contract's schema (loads zod on first use); an answer that
   * does not match is `bad_response`. Off by default.
   */
  readonly validate?: boolean;
  /** Sent as `User-Agent`. */
  readonly userAgent?: string;
}

/**
 * A backend's policy: GETs and keyed changes are tried up to 3 times, after `Retry-After` on 429
 * and 503 (at most 30 s), and after a short wait when the answer was lost.
 */
export const clientRetryPolicy: RetryPolicy = {
  maxAttempts: 3,
  retryStatuses: [429, 503],
  backoffMs: [500, 1000, 2000, 4000],
  maxRetryDelayMs: 30_000,
};

/** Fills `{workspace}` and `{id}` with the parameters, each encoded as one segment. */
export function expandPath(template: string, params: Readonly<Record<string, unknown>>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (typeof value !== "string" || value === "" || value === "." || value === "..") {
      throw new SvcApiError("invalid_request", `${name} must be a non-empty id.`, 0, {
        param: name,
      });
    }
    return encodeURIComponent(value);
  });
}

type Validator = (operation: OperationId, body: unknown) => string | null;
let validator: Promise<Validator> | undefined;

/** The contract's schemas, loaded only when an answer is to be checked. */
function loadValidator(): Promise<Validator> {
  validator ??= import("../contract/operations.ts").then(({ operations }) => {
    return (operation, body) => {
      const result = operations[operation].success.schema.safeParse(body);
      if (result.success) return null;
      const issue = result.error.issues[0];
      const where = issue === undefined || issue.path.length === 0 ? "body" : issue.path.join(".");
      return `${where}: ${issue?.message ?? "invalid"}`;
    };
  });
  return validator;
}

/**
 * The typed client's core: builds an operation's request from the routes table and sends it
 * through the Transport the CLI shares (decision 46): a time-out, retries where safe (a GET,
 * or a change with an Idempotency-Key) on 429/503 after `Retry-After` and on a lost answer, and
 * every failure a SvcApiError.
 */
export class ClientCore {
  readonly #transport: Transport;
  readonly #validate: boolean;

  constructor(options: ClientOptions) {
    const { maxAttempts, maxRetryDelayMs } = options;
    this.#transport = new Transport({
      baseUrl: options.baseUrl,
      token: options.token ?? null,
      ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      timeoutMs: options.timeoutMs ?? 30_000,
      retry: {
        ...clientRetryPolicy,
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
        ...(maxRetryDelayMs === undefined ? {} : { maxRetryDelayMs }),
      },
    });
    this.#validate = options.validate === true;
  }

  /** Calls `operation` and answers its body. */
  async call<K extends OperationId>(
    operation: K,
    input: OperationInput<K>,
  ): Promise<OperationOutput<K>> {
    return (await this.send(operation, input)).body;
  }

  /** Calls `operation` and answers its body with the answer's status and headers. */
  async send<K extends OperationId>(
    operation: K,
    input: OperationInput<K>,
  ): Promise<Answer<OperationOutput<K>>> {
    const { request, options } = this.#prepare(operation, input, "application/json");
    const answer = await this.#transport.send(request, options);
    const body = parseAnswer(answer, request.url.origin);
    if (this.#validate) {
      const problem = (await loadValidator())(operation, body);
      if (problem !== null) {
        throw new SvcApiError(
          "bad_response",
          `The API answered ${operation} with a body the contract does not allow (${problem}).`,
          answer.status,
        );
      }
    }
    return {
      status: answer.status,
      body: body as OperationOutput<K>,
      replayed: answer.headers.get("idempotent-replayed") === "true",
      headers: answer.headers,
    };
  }

  /**
   * The 2xx Response of `operation`, its body unread (a stream's, for one); any other outcome
   * is thrown as a SvcApiError.
   */
  request<K extends OperationId>(
    operation: K,
    input: OperationInput<K>,
    accept: string,
  ): Promise<Response> {
    const { request, options } = this.#prepare(operation, input, accept);
    return this.#transport.open(request, options);
  }

  #prepare<K extends OperationId>(operation: K, input: OperationInput<K>, accept: string) {
    const route = routes[operation];
    const method = route.method.toUpperCase() as HttpMethod;
    const path = expandPath(route.path, (input.params ?? {}) as Record<string, unknown>).slice(1);
    // The server keeps keys for the operations a scope guards; sign-in and sign-out take none
    // (no workspace), so sending them again is never safe, key or not.
    const keyed = route.access !== "none" && route.access !== "credential";
    const key =
      input.idempotencyKey ??
      (method !== "GET" && keyed ? `svc-${crypto.randomUUID()}` : undefined);
    const request = this.#transport.prepare(
      {
        method,
        path,
        query: input.query ?? {},
        ...(input.body === undefined ? {} : { body: input.body }),
        ...(key === undefined ? {} : { headers: { "Idempotency-Key": key } }),
      },
      accept,
    );
    const repeatable = method === "GET" || (keyed && key !== undefined);
    return { request, options: { repeatable, signal: input.signal } };
  }
}
