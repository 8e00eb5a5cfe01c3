import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/**
 * Debian's Chromium, driven by playwright-core (which never downloads a browser of its own).
 * `.ci/run` installs it when it is missing; here a missing one is a failure, never a skip.
 */
export const chromiumPath = "/usr/bin/chromium";

/** The flags of a browser on a machine without internet and without a GPU. */
const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * One headless Chromium for a test file (each test opens a context of its own: its own
 * cookies). playwright-core gives every launch a fresh `--user-data-dir` of its own, removed
 * when the browser closes.
 */
export async function launchBrowser(): Promise<Browser> {
  assert.ok(
    existsSync(chromiumPath),
    `${chromiumPath} is missing: install Debian's chromium (apt-get install chromium); .ci/run does`,
  );
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
}

/**
 * A Chromium profile whose user has chosen "Block third-party cookies" (Settings, Privacy:
 * the `profile.cookie_controls_mode` preference, 1), with `blockThirdPartyCookies`; 0 (allow
 * them) otherwise. A persistent context, since that is where a profile's preferences live
 * (playwright's `newContext()` is an incognito-like context, which blocks them by default
 * without saying so). Its user data directory goes when it closes.
 */
export async function launchProfile(options: {
  blockThirdPartyCookies: boolean;
}): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing: install Debian's chromium`);
  const userDataDir = await mkdtemp(join(tmpdir(), "svc-chromium-"));
  await mkdir(join(userDataDir, "Default"));
  const mode = options.blockThirdPartyCookies ? 1 : 0;
  await writeFile(
    join(userDataDir, "Default", "Preferences"),
    JSON.stringify({ profile: { cookie_controls_mode: mode } }),
  );
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Screenshots of the main pages, for people to look at: git-ignored. */
export const screenshotDir = fileURLToPath(
  new URL("../../../test-results/screenshots/", import.meta.url),
);

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(screenshotDir, { recursive: true });
  await page.screenshot({ path: `${screenshotDir}${name}.png`, fullPage: true });
}

let axeSource: Promise<string> | undefined;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * The page's accessibility violations of impact serious or critical, by axe-core's WCAG 2.x
 * A and AA rules. axe is evaluated through the DevTools protocol, which the page's CSP does not
 * govern; the page is not changed to let it in.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(await axeSource);
  const violations = await page.evaluate<AxeViolation[]>(`
    axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } })
      .then((result) => result.violations)
  `);
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(violation.nodes.map((node) => node.target))}`,
    );
}
