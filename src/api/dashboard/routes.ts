import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/**
 * The dashboard's files, as `npm run build` leaves them (vite, from `ui/`): `dist/ui`, beside
 * `dist/src`, and shipped in the package with it.
 */
export const dashboardRoot = fileURLToPath(new URL("../../../ui/", import.meta.url));

/**
 * What the browser may do with the dashboard's pages: load scripts, styles, images and make
 * requests to this origin only (no inline script or style, no eval), be framed by nobody,
 * post forms nowhere else. Tenant strings are rendered as text by the page, never as HTML;
 * this is the second line of defence if one ever were.
 */
export const dashboardCsp = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const securityHeaders = {
  "content-security-policy": dashboardCsp,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
} as const;

/** Vite names each bundle by its content's hash: it never changes, so it is cached for good. */
function cacheControlOf(path: string): string {
  return /[\\/]assets[\\/]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache";
}

/**
 * `GET /ui/…`: the dashboard, one page (`index.html`) and its hashed assets, with the headers
 * above on every answer. It calls the `/v1` API like any client, with the session cookie
 * (decision 35); nothing here reads the store. `/ui` redirects to `/ui/`.
 */
export function registerDashboard(app: FastifyInstance): void {
  void app.register(async (ui) => {
    ui.addHook("onSend", async (_request, reply) => {
      reply.headers(securityHeaders);
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
  });
}
