import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

/**
 * The dashboard's build (decision 35): `ui/` to `dist/ui/`, served by `svc server` at `/ui/`.
 * Every file is local to the package: no CDN, nothing fetched at run time. Bundles carry the
 * hash of their content in their names, so the server can let browsers cache them for good.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/ui/",
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL("../dist/ui", import.meta.url)),
    // Two pages: the dashboard, and the customer portal (decision 43), which the server serves
    // at /ui/portal with a CSP of its own (the one page another site may frame).
    rollupOptions: {
      input: {
        dashboard: fileURLToPath(new URL("index.html", import.meta.url)),
        portal: fileURLToPath(new URL("portal.html", import.meta.url)),
      },
    },
    emptyOutDir: true,
    // No data: URLs for scripts or styles: the page's CSP allows only its own origin.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
