import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { dashboardRoot } from "../../src/api/dashboard/routes.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";

/** `GET /ui/…`: the built dashboard, from the package, with its security headers (decision 35). */
describe("the dashboard's files", () => {
  let api: InProcessApi;
  before(async () => {
    api = await inProcessApi();
  });
  after(() => api.dispose());

  const get = (url: string) => api.app.inject({ method: "GET", url });

  it("serves the page at /ui/ with a strict CSP and the other security headers, not cached", async () => {
    const page = await get("/ui/");
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers["content-type"]), /^text\/html/);
    const csp = String(page.headers["content-security-policy"]);
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ]) {
      assert.ok(csp.includes(directive), `${directive} in ${csp}`);
    }
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(page.headers["x-content-type-options"], "nosniff");
    assert.equal(page.headers["referrer-policy"], "no-referrer");
    assert.equal(page.headers["x-frame-options"], "DENY");
    assert.equal(page.headers["cache-control"], "no-cache");
    assert.doesNotMatch(page.body, /<script>|<style>| on\w+=/, "no inline script or style");
  });

  it("redirects /ui to /ui/", async () => {
    const response = await get("/ui");
    assert.equal(response.statusCode, 301);
    assert.equal(response.headers.location, "/ui/");
  });

  it("serves the hashed bundles with their types, cached for good", async () => {
    const assets = await readdir(join(dashboardRoot, "assets"));
    const script = assets.find((name) => name.endsWith(".js"));
    const style = assets.find((name) => name.endsWith(".css"));
    assert.ok(script && style, `bundles in ${assets.join(", ")}`);
    for (const [name, type] of [
      [script, /^(text|application)\/javascript/],
      [style, /^text\/css/],
    ] as const) {
      const response = await get(`/ui/assets/${name}`);
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers["content-type"]), type);
      assert.equal(response.headers["cache-control"], "public, max-age=31536000, immutable");
      assert.ok(String(response.headers["content-security-policy"]).length > 0);
    }
  });

  it("answers 404 for a file that is not there, and never a file outside the folder", async () => {
    for (const url of [
      "/ui/nope.js",
      "/ui/../package.json",
      "/ui/%2e%2e/package.json",
      "/ui/%2e%2e/%2e%2e/package.json",
      "/ui/..%5c..%5cpackage.json",
      "/ui//evil.com",
    ]) {
      const response = await get(url);
      assert.equal(response.statusCode, 404, url);
    }
  });
});
