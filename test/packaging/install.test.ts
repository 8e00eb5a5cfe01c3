import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { registryAccessEnv, runProcess, type ProcessRun } from "../support/process.ts";
import { startTestServer } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";
import { sqlitePassOnly } from "../support/backend.ts";

/** The repository: tests run from dist/test/packaging. */
const packageRoot = fileURLToPath(new URL("../../../", import.meta.url));
const manifest = JSON.parse(await readFile(join(packageRoot, "package.json"), "utf8")) as {
  name: string;
  version: string;
};

/**
 * npm, and the installed `svc` (its `#!` line asks `env` for `node`), run with this Node first
 * on PATH and nothing else of this environment (but what reaches the registry): no npm_config_*
 * of an `npm test` around it.
 */
const env: NodeJS.ProcessEnv = {
  PATH: [dirname(process.execPath), process.env.PATH].join(delimiter),
  HOME: process.env.HOME,
  ...registryAccessEnv(),
};

function npm(args: readonly string[], cwd: string): Promise<ProcessRun> {
  return runProcess("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], {
    env: { ...env, npm_config_update_notifier: "false" },
    cwd,
  });
}

function assertRan(run: ProcessRun, what: string): void {
  assert.equal(run.code, 0, `${what} exited ${run.code}\n${run.stdout}\n${run.stderr}`);
}

/** `npm pack` of the build in dist/ (no scripts: the suite runs on a build already made). */
describe(
  "the npm package: packed, installed globally into a clean prefix, run",
  { skip: sqlitePassOnly },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let prefix: string;
    let packedFiles: string[];
    /** A fresh project that installed the tarball as a dependency, as a platform's backend does. */
    let app: string;

    before(async () => {
      dir = await tempDir();
      prefix = join(dir.path, "prefix");
      const packed = await runProcess(
        "npm",
        ["pack", "--ignore-scripts", "--json", "--pack-destination", dir.path],
        { env, cwd: packageRoot },
      );
      assertRan(packed, "npm pack");
      const [tarball] = JSON.parse(packed.stdout) as {
        filename: string;
        files: { path: string }[];
      }[];
      assert.ok(tarball);
      packedFiles = tarball.files.map((file) => file.path);
      assertRan(
        await npm(
          ["install", "--global", "--prefix", prefix, join(dir.path, tarball.filename)],
          dir.path,
        ),
        "npm install --global",
      );
      app = join(dir.path, "app");
      await mkdir(app);
      await writeFile(
        join(app, "package.json"),
        JSON.stringify({ name: "backend", private: true, type: "module" }),
      );
      assertRan(
        await npm(["install", join(dir.path, tarball.filename)], app),
        "npm install in a fresh project",
      );
    });
    after(() => dir.cleanup());

    it("the tarball holds the build, the migrations and the README, and no tests or sources", () => {
      for (const path of [
        "package.json",
        "README.md",
        "dist/src/bin/svc.js",
        "dist/src/index.js",
        "dist/src/index.d.ts",
        "dist/src/client/index.js",
        "dist/src/client/index.d.ts",
        "dist/ui/index.html",
        "migrations/sqlite/000001_init.sql",
        "migrations/postgres/000001_init.sql",
      ]) {
        assert.ok(packedFiles.includes(path), `${path} is packed`);
      }
      const strays = packedFiles.filter(
        (path) =>
          path.startsWith("dist/test/") ||
          path.startsWith("src/") ||
          path.startsWith("ui/") ||
          path === ".npmrc",
      );
      assert.deepEqual(strays, []);
    });

    it("svc --version answers the package's version", async () => {
      const run = await runProcess(join(prefix, "bin", "svc"), ["--version"], { env });
      assertRan(run, "svc --version");
      assert.equal(run.stdout.trim(), manifest.version);
    });

    it("svc server starts from the installed package, answers /healthz and serves the dashboard", async () => {
      const server = await startTestServer({
        dataDir: join(dir.path, "data"),
        bin: join(prefix, "bin", "svc"),
        env,
      });
      try {
        const response = await fetch(new URL("/healthz", server.url));
        assert.equal(response.status, 200);
        assert.deepEqual(await response.json(), { status: "ok" });
        const dashboard = await fetch(new URL("/ui/", server.url));
        assert.equal(dashboard.status, 200);
        assert.match(dashboard.headers.get("content-type") ?? "", /^text\/html/);
        assert.match(
          await dashboard.text(),
          /<script type="module" crossorigin src="\/ui\/assets\//,
        );
      } finally {
        assert.equal(await server.stop(), 0);
      }
    });

    it('import { verifySignature } from "svc-webhooks" works from the installed package', async () => {
      // A module beside the global node_modules resolves the package by its name, as any
      // project that installed it does.
      const script = join(prefix, "lib", "receiver-check.mjs");
      await writeFile(
        script,
        [
          `import { signatureHeader, verifySignature, WebhookVerificationError } from ${JSON.stringify(manifest.name)};`,
          'const secret = "whsec_ZXhhbXBsZS1yZWNlaXZlci10ZXN0LXNlY3JldA";',
          'const body = \'{"id":"evt_1"}\';',
          "const now = Math.floor(Date.now() / 1000);",
          "const { timestamp } = verifySignature(secret, signatureHeader(secret, now, body), body);",
          "let refused = null;",
          "try { verifySignature(secret, signatureHeader(secret, now, body), body + ' '); }",
          "catch (error) { if (error instanceof WebhookVerificationError) refused = error.code; }",
          "console.log(JSON.stringify({ verified: timestamp === now, refused }));",
        ].join("\n"),
      );
      const run = await runProcess(process.execPath, [script], { env });
      assertRan(run, "the import");
      assert.deepEqual(JSON.parse(run.stdout), { verified: true, refused: "signature_mismatch" });
    });

    it('import { createClient } from "svc-webhooks/client" works in a fresh project, typed, against the installed server', async () => {
      const server = await startTestServer({
        dataDir: join(dir.path, "client-data"),
        bin: join(prefix, "bin", "svc"),
        env,
      });
      try {
        const script = join(app, "client-check.mjs");
        await writeFile(
          script,
          [
            `import { createClient, SvcApiError } from "${manifest.name}/client";`,
            "const client = createClient({ baseUrl: process.argv[2], token: 'sk_not_a_key' });",
            "const error = await client.destinations.list('ws_1').first().catch((e) => e);",
            "console.log(JSON.stringify({ typed: error instanceof SvcApiError, code: error.code, status: error.status }));",
          ].join("\n"),
        );
        const run = await runProcess(process.execPath, [script, server.url], { env, cwd: app });
        assertRan(run, "the client's import");
        assert.deepEqual(JSON.parse(run.stdout), {
          typed: true,
          code: "unauthenticated",
          status: 401,
        });
      } finally {
        assert.equal(await server.stop(), 0);
      }
      // The types resolve from the installed package: a wrong call does not compile.
      await writeFile(
        join(app, "check.ts"),
        [
          `import { createClient, type ErrorCode } from "${manifest.name}/client";`,
          "const client = createClient({ baseUrl: 'http://127.0.0.1:1', token: 'sk_x' });",
          "export async function publish(): Promise<string> {",
          "  const event = await client.events.publish('ws_1', { type: 'job.completed', data: { object: {} } });",
          "  const code: ErrorCode = 'not_found';",
          "  // @ts-expect-error: a destination's url is a string",
          "  await client.destinations.create('ws_1', { url: 1 });",
          "  return event.id + code;",
          "}",
        ].join("\n"),
      );
      const tsc = join(packageRoot, "node_modules", "typescript", "bin", "tsc");
      const compiled = await runProcess(
        process.execPath,
        [
          tsc,
          "--noEmit",
          "--strict",
          "--module",
          "nodenext",
          "--moduleResolution",
          "nodenext",
          "--target",
          "es2022",
          "--skipLibCheck",
          "check.ts",
        ],
        { env, cwd: app },
      );
      assertRan(compiled, "tsc on a file using the installed client");
    });
  },
);
