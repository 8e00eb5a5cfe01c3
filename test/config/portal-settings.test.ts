import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadServerConfig } from "../../src/config/server-config.ts";

/** The customer portal's settings (decision 43): each checked before it reaches a header or a link. */
describe("portal settings", () => {
  const load = (env: NodeJS.ProcessEnv) => loadServerConfig({ env, flags: {} });
  const refused = (env: NodeJS.ProcessEnv, variable: string) => {
    assert.throws(
      () => load(env),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "invalid_config");
        assert.match(error.message, new RegExp(variable));
        return true;
      },
      JSON.stringify(env),
    );
  };

  it("has documented defaults: nobody frames the portal, links last 5 minutes, sessions an hour", () => {
    const config = load({});
    assert.deepEqual(config.portalFrameAncestors, []);
    assert.equal(config.portalLinkTtl, 300_000);
    assert.equal(config.portalSessionTtl, 3_600_000);
    assert.equal(config.portalTheme, "light");
    assert.equal(config.publicUrl, undefined);
  });

  it("takes frame ancestors as a CSV of origins, lower-cased, with *. subdomains and ports", () => {
    const config = load({
      SVC_PORTAL_FRAME_ANCESTORS:
        "https://App.Example.com, http://localhost:3000,https://*.example.org,http://[::1]:8080/",
    });
    assert.deepEqual(config.portalFrameAncestors, [
      "https://app.example.com",
      "http://localhost:3000",
      "https://*.example.org",
      "http://[::1]:8080",
    ]);
  });

  it("refuses a frame ancestor that is not an origin: a path, another scheme, a keyword, or CSP of its own", () => {
    for (const value of [
      "https://example.com/embed",
      "https://example.com; script-src *",
      "https://example.com 'unsafe-inline'",
      "javascript:alert(1)",
      "'self'",
      "*",
      "https://*",
      "example.com",
      "https://exa mple.com",
      "https://example.com:99999",
      "https://user@example.com",
    ]) {
      refused({ SVC_PORTAL_FRAME_ANCESTORS: value }, "SVC_PORTAL_FRAME_ANCESTORS");
    }
  });

  it("refuses a public URL with a path or a wildcard, link lives past an hour, sessions past a day", () => {
    refused({ SVC_PUBLIC_URL: "https://webhooks.example.com/svc" }, "SVC_PUBLIC_URL");
    refused({ SVC_PUBLIC_URL: "https://*.example.com" }, "SVC_PUBLIC_URL");
    refused({ SVC_PORTAL_LINK_TTL: "61m" }, "SVC_PORTAL_LINK_TTL");
    refused({ SVC_PORTAL_LINK_TTL: "500ms" }, "SVC_PORTAL_LINK_TTL");
    refused({ SVC_PORTAL_SESSION_TTL: "25h" }, "SVC_PORTAL_SESSION_TTL");
    assert.equal(load({ SVC_PORTAL_LINK_TTL: "1h" }).portalLinkTtl, 3_600_000);
  });

  it("checks the theming: a #rrggbb accent, light or dark, a product name without control characters", () => {
    refused({ SVC_PORTAL_ACCENT_COLOR: "red" }, "SVC_PORTAL_ACCENT_COLOR");
    refused({ SVC_PORTAL_ACCENT_COLOR: "#fff; background: url(x)" }, "SVC_PORTAL_ACCENT_COLOR");
    refused({ SVC_PORTAL_THEME: "neon" }, "SVC_PORTAL_THEME");
    refused({ SVC_PORTAL_PRODUCT_NAME: "Acme\u001b[31m" }, "SVC_PORTAL_PRODUCT_NAME");
    refused({ SVC_PORTAL_PRODUCT_NAME: "x".repeat(61) }, "SVC_PORTAL_PRODUCT_NAME");
    const config = load({
      SVC_PORTAL_ACCENT_COLOR: "#0B57D0",
      SVC_PORTAL_THEME: "dark",
      SVC_PORTAL_PRODUCT_NAME: "Acme <Hooks>",
    });
    assert.equal(config.portalAccentColor, "#0B57D0");
    assert.equal(config.portalTheme, "dark");
    assert.equal(config.portalProductName, "Acme <Hooks>", "text, shown as text");
  });
});
