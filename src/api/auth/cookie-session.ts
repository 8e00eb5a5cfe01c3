import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import "@fastify/cookie";
import { AppError } from "../../errors.ts";

/**
 * The dashboard's session (decision 35): the same `svs_` session a sign-in makes, carried in
 * an HttpOnly cookie instead of an Authorization header, so that no script in the page can
 * read it. A cookie is sent by the browser on its own, so every request that changes
 * something and authenticated by the cookie must also carry the session's CSRF token in
 * `X-CSRF-Token`: a page of another origin can make the browser send the cookie (were
 * SameSite=Strict ever ignored), but cannot read the token, which only a signed-in answer of
 * this origin gives.
 */

/** The session cookie on plain http (a development server on http://localhost). */
export const SESSION_COOKIE = "svc_session";
/**
 * The session cookie when it is Secure (decision 39). The `__Host-` prefix makes the browser
 * take it only if it is Secure, for Path=/ and with no Domain: no sibling domain can set one,
 * and no page of a plain-http port can. Other https ports of the same host still can: cookies
 * are not isolated by port, which is why the dashboard should have a host name of its own.
 */
export const SECURE_SESSION_COOKIE = "__Host-svc_session";
const sessionCookieNames = [SECURE_SESSION_COOKIE, SESSION_COOKIE] as const;
export const CSRF_HEADER = "x-csrf-token";

/** Methods that change nothing, and so need no CSRF token (RFC 9110 "safe"). */
const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The CSRF token of a session: a hash of its token under a label of its own. It is derived, so
 * nothing is stored; it is one-way, so knowing it gives no way back to the session's token;
 * and it dies with the session.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHash("sha256").update("svc csrf token\0").update(sessionToken).digest("base64url");
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request presents, and how: a Bearer header wins over the cookie. */
export interface PresentedToken {
  readonly token: string;
  readonly viaCookie: boolean;
}

/**
 * The session cookie's token, if any, under either name. Parsed here rather than by
 * @fastify/cookie's own hook, which would run after the authorisation hook (plugins load
 * after hooks added directly).
 */
export function cookieToken(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  // Another site of the same host (another port) or a sibling domain can set a cookie of the
  // same name for a narrower path, which the browser sends first, or the other name beside
  // ours: with two, under either name, neither is trusted (a planted session would sign the
  // user in as someone else; decision 35a).
  const named = header
    .split(";")
    .filter((pair) => sessionCookieNames.some((name) => pair.trim().startsWith(`${name}=`)));
  if (named.length > 1) {
    throw new AppError(
      "unauthenticated",
      "The request carries more than one session cookie. Sign out, clear this site's cookies, and sign in again.",
    );
  }
  const cookies = request.server.parseCookie(header);
  const value = cookies[SECURE_SESSION_COOKIE] ?? cookies[SESSION_COOKIE];
  return value === undefined || value === "" ? undefined : value;
}

/**
 * Refuses a change that authenticated by the cookie without the session's CSRF token. Run
 * before the token is even looked up, so a forged request learns nothing.
 */
export function checkCsrf(request: FastifyRequest, sessionToken: string): void {
  if (safeMethods.has(request.method)) return;
  const given = request.headers[CSRF_HEADER];
  if (typeof given !== "string" || !sameToken(given, csrfTokenFor(sessionToken))) {
    throw new AppError("csrf_token_invalid");
  }
}

/**
 * Whether the session cookie gets `Secure`: when the request came over TLS, or the operator
 * says that users reach the server over https through a proxy (`behindTls`).
 */
function secure(request: FastifyRequest, behindTls: boolean): boolean {
  return behindTls || request.protocol === "https";
}

const cookieAttributes = { path: "/", httpOnly: true, sameSite: "strict" } as const;

/**
 * Sets the session cookie: `__Host-svc_session` when it is Secure (Path=/, no Domain, as the
 * prefix demands), `svc_session` on plain http, where a `__Host-` cookie would be refused by
 * the browser. A Secure sign-in also clears a plain one left from before (`behindTls` turned
 * on), which would otherwise be a second session cookie, trusted neither.
 */
export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  options: { token: string; expiresAt: Date; behindTls: boolean },
): void {
  const isSecure = secure(request, options.behindTls);
  if (isSecure) reply.clearCookie(SESSION_COOKIE, { ...cookieAttributes, secure: true });
  reply.setCookie(isSecure ? SECURE_SESSION_COOKIE : SESSION_COOKIE, options.token, {
    ...cookieAttributes,
    secure: isSecure,
    expires: options.expiresAt,
  });
}

/** Clears the session cookie under each name the browser would take from this request. */
export function clearSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  behindTls: boolean,
): void {
  const isSecure = secure(request, behindTls);
  reply.clearCookie(SESSION_COOKIE, { ...cookieAttributes, secure: isSecure });
  if (isSecure) reply.clearCookie(SECURE_SESSION_COOKIE, { ...cookieAttributes, secure: true });
}
