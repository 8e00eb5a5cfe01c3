import type { OperationId } from "../contract/operations.ts";
import { ClientCore, type ClientOptions } from "./core.ts";
import { SvcApiError } from "./errors.ts";
import { pagesOf } from "./pages.ts";
import type {
  Answer,
  ItemOf,
  ListOperationId,
  OperationInput,
  OperationOutput,
  RequestOptions,
} from "./types.ts";

/**
 * The typed client of the svc API for a platform's backend (`svc-webhooks/client`, decision
 * 44): one generic `call(operation, input)` over the contract's operations table, and named
 * methods on it. Lists are async iterables that follow `next_cursor`.
 */

export type { ClientOptions } from "./core.ts";
export { SvcApiError, type ErrorCode } from "./errors.ts";
export { routes } from "./routes.ts";
export type * from "./types.ts";
export type { OperationId } from "../contract/operations.ts";

type Input<K extends OperationId> = OperationInput<K>;
type Out<K extends OperationId> = Promise<OperationOutput<K>>;
type Body<K extends OperationId> = NonNullable<Input<K>["body"]>;
type Query<K extends OperationId> = NonNullable<Input<K>["query"]>;
/** A list's filters: its query without the cursor, which the iteration carries. */
type Filters<K extends ListOperationId> = Omit<Query<K>, "cursor">;

/**
 * A list: `for await (const item of list)` reads every item, page after page; `pages()`
 * reads the pages themselves; `first()` one page only.
 */
export class Paged<K extends ListOperationId> implements AsyncIterable<ItemOf<K>> {
  readonly #fetchPage: (cursor: string | null) => Out<K>;

  constructor(fetchPage: (cursor: string | null) => Out<K>) {
    this.#fetchPage = fetchPage;
  }

  pages(): AsyncGenerator<OperationOutput<K>, void, undefined> {
    return pagesOf(
      this.#fetchPage,
      () => new SvcApiError("bad_response", "The API repeated a pagination cursor; stopping.", 200),
    );
  }

  first(): Out<K> {
    return this.#fetchPage(null);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ItemOf<K>, void, undefined> {
    for await (const page of this.pages()) yield* page.data as ItemOf<K>[];
  }
}

export class SvcClient {
  readonly #core: ClientCore;

  constructor(options: ClientOptions) {
    this.#core = new ClientCore(options);
  }

  /** Any operation by its id (docs/openapi.json's operationId). */
  call<K extends OperationId>(operation: K, input: Input<K>): Out<K> {
    return this.#core.call(operation, input);
  }

  /** As `call`, with the answer's status, headers and whether it was an idempotent replay. */
  send<K extends OperationId>(operation: K, input: Input<K>): Promise<Answer<OperationOutput<K>>> {
    return this.#core.send(operation, input);
  }

  #list<K extends ListOperationId>(
    operation: K,
    input: Omit<Input<K>, "query">,
    filters: Filters<K> | undefined,
  ): Paged<K> {
    return new Paged<K>((cursor) =>
      this.#core.call(operation, {
        ...input,
        query: { ...filters, ...(cursor === null ? {} : { cursor }) },
      } as Input<K>),
    );
  }

  readonly destinations = {
    create: (workspace: string, body: Body<"createWebhook">, options?: RequestOptions) =>
      this.call("createWebhook", { params: { workspace }, body, ...options }),
    list: (workspace: string, filters?: Filters<"listWebhooks">, options?: RequestOptions) =>
      this.#list("listWebhooks", { params: { workspace }, ...options }, filters),
    get: (workspace: string, id: string, options?: RequestOptions) =>
      this.call("getWebhook", { params: { workspace, id }, ...options }),
    update: (
      workspace: string,
      id: string,
      body: Body<"updateWebhook">,
      options?: RequestOptions,
    ) => this.call("updateWebhook", { params: { workspace, id }, body, ...options }),
    delete: (workspace: string, id: string, options?: RequestOptions) =>
      this.call("deleteWebhook", { params: { workspace, id }, ...options }),
    /** Queues again its failed deliveries since a time. */
    recover: (
      workspace: string,
      id: string,
      body: Body<"recoverWebhook">,
      options?: RequestOptions,
    ) => this.call("recoverWebhook", { params: { workspace, id }, body, ...options }),
  };

  readonly events = {
    /** With `destination` in the body, a test event to that destination alone. */
    publish: (workspace: string, body: Body<"publishEvent">, options?: RequestOptions) =>
      this.call("publishEvent", { params: { workspace }, body, ...options }),
    list: (workspace: string, filters?: Filters<"listEvents">, options?: RequestOptions) =>
      this.#list("listEvents", { params: { workspace }, ...options }, filters),
    get: (workspace: string, id: string, options?: RequestOptions) =>
      this.call("getEvent", { params: { workspace, id }, ...options }),
  };

  readonly deliveries = {
    list: (workspace: string, filters?: Filters<"listDeliveries">, options?: RequestOptions) =>
      this.#list("listDeliveries", { params: { workspace }, ...options }, filters),
    get: (workspace: string, id: string, options?: RequestOptions) =>
      this.call("getDelivery", { params: { workspace, id }, ...options }),
    retry: (workspace: string, id: string, options?: RequestOptions) =>
      this.call("retryDelivery", { params: { workspace, id }, ...options }),
    stats: (workspace: string, query?: Query<"getDeliveryStats">, options?: RequestOptions) =>
      this.call("getDeliveryStats", {
        params: { workspace },
        ...(query === undefined ? {} : { query }),
        ...options,
      }),
  };

  readonly listenSessions = {
    open: (workspace: string, body: Body<"openListenSession">, options?: RequestOptions) =>
      this.call("openListenSession", { params: { workspace }, body, ...options }),
    list: (workspace: string, options?: RequestOptions) =>
      this.call("listListenSessions", { params: { workspace }, ...options }),
    end: (workspace: string, id: string, options?: RequestOptions) =>
      this.call("deleteListenSession", { params: { workspace, id }, ...options }),
    /** The session's event stream, its body unread (text/event-stream). */
    stream: (workspace: string, id: string, options?: RequestOptions) =>
      this.#core.request(
        "streamListenSession",
        { params: { workspace, id }, ...options },
        "text/event-stream",
      ),
    reportResult: (
      workspace: string,
      id: string,
      body: Body<"reportListenResult">,
      options?: RequestOptions,
    ) => this.call("reportListenResult", { params: { workspace, id }, body, ...options }),
  };

  readonly auth = {
    signIn: (body: Body<"signIn">, options?: RequestOptions) =>
      this.call("signIn", { body, ...options }),
    /** The dashboard's sign-in: its session is a cookie, which a backend has no use for. */
    signInBrowser: (body: Body<"signInBrowser">, options?: RequestOptions) =>
      this.call("signInBrowser", { body, ...options }),
    whoAmI: (options?: RequestOptions) => this.call("whoAmI", { ...options }),
    signOut: (options?: RequestOptions) => this.call("signOut", { ...options }),
  };

  /** The platform API's routes: an operator key's (decision 42). */
  readonly workspaces = {
    create: (body: Body<"createWorkspace">, options?: RequestOptions) =>
      this.call("createWorkspace", { body, ...options }),
    list: (filters?: Filters<"listWorkspaces">, options?: RequestOptions) =>
      this.#list("listWorkspaces", { ...options }, filters),
    get: (workspace: string, options?: RequestOptions) =>
      this.call("getWorkspace", { params: { workspace }, ...options }),
    update: (workspace: string, body: Body<"updateWorkspace">, options?: RequestOptions) =>
      this.call("updateWorkspace", { params: { workspace }, body, ...options }),
    delete: (workspace: string, query?: Query<"deleteWorkspace">, options?: RequestOptions) =>
      this.call("deleteWorkspace", {
        params: { workspace },
        ...(query === undefined ? {} : { query }),
        ...options,
      }),
  };

  readonly apiKeys = {
    mint: (workspace: string, body: Body<"mintApiKey">, options?: RequestOptions) =>
      this.call("mintApiKey", { params: { workspace }, body, ...options }),
    list: (workspace: string, filters?: Filters<"listApiKeys">, options?: RequestOptions) =>
      this.#list("listApiKeys", { params: { workspace }, ...options }, filters),
    revoke: (workspace: string, id: string, options?: RequestOptions) =>
      this.call("revokeApiKey", { params: { workspace, id }, ...options }),
  };

  readonly portal = {
    createLink: (workspace: string, body: Body<"createPortalLink">, options?: RequestOptions) =>
      this.call("createPortalLink", { params: { workspace }, body, ...options }),
    endSessions: (workspace: string, options?: RequestOptions) =>
      this.call("endPortalSessions", { params: { workspace }, ...options }),
    /** What the portal's page does with a link's token. */
    openSession: (body: Body<"openPortalSession">, options?: RequestOptions) =>
      this.call("openPortalSession", { body, ...options }),
  };
}

/** `createClient({ baseUrl, token })`: the client. */
export function createClient(options: ClientOptions): SvcClient {
  return new SvcClient(options);
}
