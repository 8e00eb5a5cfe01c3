import { checkAnswer } from "./openapi-check.ts";

/**
 * A thin HTTP client for the API under test: real requests over loopback, each answer checked
 * against the OpenAPI document.
 */
export interface ApiResponse<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly text: string;
  readonly headers: Headers;
}

export interface ApiClient {
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>>;
  get<T = unknown>(path: string): Promise<ApiResponse<T>>;
  post<T = unknown>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  patch<T = unknown>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  delete<T = unknown>(path: string): Promise<ApiResponse<T>>;
}

/** `body`: an object is sent as JSON; a string is sent as the exact bytes given. */
export function apiClient(baseUrl: string, token: string | null): ApiClient {
  const request = async <T>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = typeof body === "string" ? body : JSON.stringify(body);
    }
    const response = await fetch(new URL(path, baseUrl), { method, headers, body: payload });
    const text = await response.text();
    checkAnswer(method, path, response.status, text);
    return {
      status: response.status,
      text,
      headers: response.headers,
      body: (text === "" ? null : JSON.parse(text)) as T,
    };
  };
  return {
    request,
    get: (path) => request("GET", path),
    post: (path, body) => request("POST", path, body),
    patch: (path, body) => request("PATCH", path, body),
    delete: (path) => request("DELETE", path),
  };
}

export interface DestinationJson {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  updated_at: string;
  secret?: string;
  last_delivery?: unknown;
}

export interface ErrorJson {
  error: { code: string; message: string; param?: string };
}
