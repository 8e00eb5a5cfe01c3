/**
 * The page's one way to the server: the `/v1` API, as any client calls it. The dashboard
 * sends the session cookie the browser sends by itself (same origin only) and, on every
 * change, the session's CSRF token, which is held here in memory and nowhere else (decision
 * 35). The customer portal (decision 43) sends no cookie at all: its session's token, held
 * here in memory and nowhere else, goes as `Authorization: Bearer`, so that the portal works
 * in a frame where the browser keeps third-party cookies out.
 */

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let csrfToken: string | null = null;
/** The portal's session token; null in the dashboard, and in the portal before its link is opened. */
let bearerToken: string | null = null;
/** False in the portal: no request of its carries a cookie. */
let sendCookies = true;
let onSignedOut: () => void = () => undefined;

export function useCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** The portal's page: from now on no cookie is sent, and `token` (once known) is the bearer. */
export function usePortalSession(token: string | null): void {
  sendCookies = false;
  bearerToken = token;
}

/** Called when the server says the session is gone (401): the app shows the sign-in form. */
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

type Method = "GET" | "POST" | "PATCH" | "DELETE";

export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrfToken !== null) headers["x-csrf-token"] = csrfToken;
  if (bearerToken !== null) headers.authorization = `Bearer ${bearerToken}`;
  const response = await fetch(path, {
    method,
    headers,
    credentials: sendCookies ? "same-origin" : "omit",
    cache: "no-store",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const parsed: unknown = text === "" ? null : JSON.parse(text);
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    // A refused sign-in or portal link is that form's failure, not a session that ended.
    const opening =
      path.startsWith("/v1/auth/browser-sessions") || path.startsWith("/v1/auth/portal-sessions");
    if (response.status === 401 && !opening) onSignedOut();
    throw new ApiError(
      response.status,
      error?.code ?? "http_error",
      error?.message ?? `The server answered ${response.status}.`,
    );
  }
  return parsed as T;
}

/** `/v1/workspaces/{ws}` + `rest`, each path segment encoded. */
export function inWorkspace(workspaceId: string, rest: string): string {
  return `/v1/workspaces/${encodeURIComponent(workspaceId)}${rest}`;
}

/** A query string of the members that are set. */
export function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== "") params.set(name, value);
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
