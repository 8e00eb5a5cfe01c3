/**
 * The README quickstart's last step as a person takes it: the dashboard's sign-in page in
 * Chromium says how to get an account, lets in the user the quickstart made, and shows the
 * destination it registered. scripts/quickstart-check.sh runs it in the quickstart's clone:
 *
 *   node dist/scripts/quickstart-dashboard.js <dashboard URL> <e-mail> <password file> <destination URL>
 *
 * Exits non-zero (playwright's time-out, naming what it waited for) when a step fails.
 */
import { readFile } from "node:fs/promises";
import { launchBrowser } from "../test/support/browser.ts";

const [dashboardUrl, email, passwordFile, destinationUrl] = process.argv.slice(2);
if (
  dashboardUrl === undefined ||
  email === undefined ||
  passwordFile === undefined ||
  destinationUrl === undefined
) {
  throw new Error("usage: quickstart-dashboard <dashboard URL> <e-mail> <password file> <URL>");
}
// The first line, as `svc admin users create` reads the password from standard input.
const password = (await readFile(passwordFile, "utf8")).split("\n")[0] ?? "";

const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  await page.goto(dashboardUrl);
  await page.getByRole("heading", { name: "Sign in to svc" }).waitFor();
  await page.getByText("svc admin users create").waitFor();
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
  await page.getByRole("link", { name: destinationUrl }).first().waitFor();
  process.stdout.write(
    `CHECK: signed in to the dashboard as ${email}; it lists ${destinationUrl}\n`,
  );
} finally {
  await browser.close();
}
