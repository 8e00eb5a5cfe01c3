import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/**
 * The dashboard's files, as `npm run build` leaves them (vite, from `ui/`): `dist/ui`, beside
 * `dist/src`, and shipped in the package with it.
 */
export const dashboardRoot = fileURLToPath(new URL("../../../ui/", import.meta.url));

/** The customer portal's page (decision 43): the one page another site may frame. */
export const portalPagePath = "/ui/portal";

/**
 * What the browser may do with the dashboard's pages: load scripts, styles, images and make
 * requests to this origin only (no inline script or style, no eval), be framed by
 * `frameAncestors` (nobody, but for the portal's page), post forms nowhere else. Tenant
 * strings are rendered by the page as text, never as HTML; this is the second line of defence
 * if one ever were.
 */
export function contentSecurityPolicy(frameAncestors: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors.length === 0 ? "'none'" : frameAncestors.join(" ")}`,
  ].join("; ");
}

/**
 * The headers of every answer under `/ui/`, given who may frame it. `X-Frame-Options` is for
 * browsers that predate `frame-ancestors`: DENY where nobody may frame the page; left out
 * where some origins may, since it cannot name them (ALLOW-FROM is gone from every browser)
 * and DENY would contradict the CSP (browsers that know the CSP ignore it there anyway).
 */
function securityHeaders(frameAncestors: readonly string[]): Record<string, string> {
  return {
    "content-security-policy": contentSecurityPolicy(frameAncestors),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    ...(frameAncestors.length === 0 ? { "x-frame-options": "DENY" } : {}),
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
  };
}

/** Vite names each bundle by its content's hash: it never changes, so it is cached for good. */
function cacheControlOf(path: string): string {
  return /[\\/]assets[\\/]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache";
}

/**
 * `GET /ui/…`: the dashboard, one page (`index.html`) and its hashed assets, with the headers
 * above on every answer; and `GET /ui/portal`, the customer portal's page (`portal.html`),
 * which alone may be framed, by `portalFrameAncestors`. Which headers an answer gets is
 * decided by the route the router matched, never by the URL (decision 39). Both pages call the
 * `/v1` API like any client (decisions 35, 43); nothing here reads the store. `/ui` redirects
 * to `/ui/`.
 */
export function registerDashboard(
  app: FastifyInstance,
  portalFrameAncestors: readonly string[],
): void {
  const dashboardHeaders = securityHeaders([]);
  const portalHeaders = securityHeaders(portalFrameAncestors);
  void app.register(async (ui) => {
    ui.addHook("onSend", async (request, reply) => {
      reply.headers(request.routeOptions.url === portalPagePath ? portalHeaders : dashboardHeaders);
    });
    if (!existsSync(dashboardRoot)) {
      ui.log.warn({ root: dashboardRoot }, "the dashboard is not built; /ui/ is not served");
      return;
    }
    ui.get("/ui", (_request, reply) => reply.redirect("/ui/", 301));
    await ui.register(fastifyStatic, {
      root: dashboardRoot,
      prefix: "/ui/",
      index: "index.html",
      cacheControl: false,
      setHeaders: (response, path) => {
        response.header("cache-control", cacheControlOf(path));
      },
    });
    // Its cache-control comes from `setHeaders` above, as the dashboard page's: no-cache.
    ui.get(portalPagePath, (_request, reply) => reply.sendFile("portal.html"));
  });
}
