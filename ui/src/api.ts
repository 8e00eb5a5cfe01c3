/**
 * The dashboard's one way to the server: the `/v1` API, as any client calls it, with the
 * session cookie the browser sends by itself (same origin only) and, on every change, the
 * session's CSRF token, which is held here in memory and nowhere else (decision 35).
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
let onSignedOut: () => void = () => undefined;

export function useCsrfToken(token: string | null): void {
  csrfToken = token;
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
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    cache: "no-store",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const parsed: unknown = text === "" ? null : JSON.parse(text);
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    if (response.status === 401 && !path.startsWith("/v1/auth/browser-sessions")) onSignedOut();
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
