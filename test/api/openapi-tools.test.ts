import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type ApiResponse } from "../support/api.ts";
import { createUser, PASSWORD } from "../support/auth.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { operatorKeyOf, serverFixture, type ServerFixture } from "../support/fixture.ts";
import { startPrismProxy, type PrismProxy } from "../support/prism.ts";
import { runProcess } from "../support/process.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { tempDir } from "../support/temp.ts";
import { sharedTestCa } from "../support/tls.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const documentPath = "docs/openapi.json";

/** Runs a tool's CLI from its npm package, in the repository, with nothing sent anywhere. */
function tool(script: string, args: readonly string[]) {
  return runProcess(process.execPath, [`${root}node_modules/${script}`, ...args], {
    cwd: root,
    env: {
      ...process.env,
      NO_COLOR: "1",
      // Redocly's usage report and update check are the only calls out it would make.
      REDOCLY_TELEMETRY: "off",
      REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
    },
  });
}

/**
 * docs/openapi.json as tools nobody here wrote read it (issue 30, decision 31): two linters,
 * and Prism's validating proxy in front of a real `svc server`.
 */
describe("the OpenAPI document, read by third-party tools", () => {
  it("passes Redocly's recommended lint with no error and no warning (redocly.yaml)", async () => {
    const run = await tool("@redocly/cli/bin/cli.js", [
      "lint",
      "--config",
      "redocly.yaml",
      "--format",
      "json",
      documentPath,
    ]);
    const report = JSON.parse(run.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    assert.deepEqual(
      report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`),
      [],
    );
    assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 });
    assert.equal(run.code, 0, run.stderr);
  });

  it("passes Spectral's spectral:oas lint with no error and no warning (.spectral.yaml)", async () => {
    const dir = await tempDir();
    try {
      // Its JSON report goes to a file: on stdout it runs into its closing sentence.
      const reportPath = join(dir.path, "spectral.json");
      const run = await tool("@stoplight/spectral-cli/dist/index.js", [
        "lint",
        "--ruleset",
        ".spectral.yaml",
        "--format",
        "json",
        "--output",
        reportPath,
        "--fail-severity",
        "hint",
        documentPath,
      ]);
      const results = JSON.parse(await readFile(reportPath, "utf8")) as {
        code: string;
        message: string;
        path: string[];
      }[];
      assert.deepEqual(
        results.map((result) => `${result.code}: ${result.message} at ${result.path.join(".")}`),
        [],
      );
      assert.equal(run.code, 0, run.stderr);
    } finally {
      await dir.cleanup();
    }
  });

  describe("a session through Prism's validating proxy (prism proxy --errors)", () => {
    let fixture: ServerFixture;
    let receiver: Receiver;
    let prism: PrismProxy;
    let operatorKey: string;

    before(async () => {
      const ca = await sharedTestCa();
      // One failed attempt, then a retry an hour away: the session's retry finds it waiting.
      fixture = await serverFixture({ ...deliveryEnv(ca), SVC_RETRY_SCHEDULE: "1h" });
      receiver = await startReceiver({ ca, respond: always(500) });
      operatorKey = await operatorKeyOf(fixture, "workspaces:write");
      prism = await startPrismProxy(fixture.server.url);
    });
    after(async () => {
      await prism.stop();
      await receiver.close();
      await fixture.dispose();
    });

    /** Asserts Prism passed the exchange on with no violation, at the status expected. */
    function passed<T>(response: ApiResponse<T>, status: number, what: string): ApiResponse<T> {
      assert.equal(response.headers.get("sl-violations"), null, `${what}: ${response.text}`);
      assert.equal(response.status, status, `${what}: ${response.text}\n${prism.output()}`);
      return response;
    }

    it("valid requests to every main operation meet no violation", async () => {
      const operator = apiClient(prism.url, operatorKey);
      const tenant: ApiClient = apiClient(prism.url, fixture.owner.key);
      const ws = `/v1/workspaces/${fixture.owner.id}`;

      // Workspaces and API keys, with the operator key.
      const created = passed(
        await operator.post<{ id: string }>("/v1/workspaces", {
          name: "Acme Corp",
          external_id: "cus_prism",
          metadata: { plan: "pro" },
        }),
        201,
        "create a workspace",
      );
      const other = `/v1/workspaces/${created.body.id}`;
      passed(await operator.get("/v1/workspaces?limit=10"), 200, "list workspaces");
      passed(await operator.get(other), 200, "get a workspace");
      passed(await operator.patch(other, { name: "Acme" }), 200, "rename a workspace");
      const key = passed(
        await operator.post<{ id: string }>(`${other}/api-keys`, {
          scopes: ["events:write"],
          name: "backend",
        }),
        201,
        "mint a key",
      );
      passed(await operator.get(`${other}/api-keys?limit=5`), 200, "list keys");
      passed(await operator.delete(`${other}/api-keys/${key.body.id}`), 200, "revoke a key");
      passed(await operator.delete(other), 200, "delete a workspace");

      // Destinations.
      const destination = passed(
        await tenant.post<{ id: string }>(`${ws}/webhooks`, {
          url: `https://hooks.test:${receiver.port}/prism`,
          events: ["*"],
        }),
        201,
        "create a destination",
      );
      const member = `${ws}/webhooks/${destination.body.id}`;
      passed(await tenant.get(`${ws}/webhooks?limit=20`), 200, "list destinations");
      passed(await tenant.get(member), 200, "get a destination");
      passed(await tenant.patch(member, { events: ["job.completed"] }), 200, "update");
      passed(await tenant.get(`${ws}/webhooks/dst_missing`), 404, "a refusal");

      // Events and deliveries.
      const published = passed(
        await tenant.post<{ id: string }>(`${ws}/events`, {
          type: "job.completed",
          data: { object: { id: "job_1", status: "done" } },
        }),
        202,
        "publish",
      );
      passed(await tenant.get(`${ws}/events?limit=5`), 200, "list events");
      passed(await tenant.get(`${ws}/events/${published.body.id}`), 200, "get an event");
      const delivery = await eventually(
        async () => {
          const list = passed(
            await tenant.get<{ data: { id: string; state: string }[] }>(`${ws}/deliveries?limit=5`),
            200,
            "list deliveries",
          );
          const first = list.body.data[0];
          return first?.state === "retry_scheduled" ? first : undefined;
        },
        { what: "the first attempt to fail" },
      );
      passed(await tenant.get(`${ws}/deliveries/${delivery.id}`), 200, "get a delivery");
      passed(await tenant.post(`${ws}/deliveries/${delivery.id}/retry`), 202, "retry");
      passed(
        await tenant.post(`${member}/recover`, { since: "2026-01-01T00:00:00Z" }),
        202,
        "recover",
      );
      passed(await tenant.get(`${ws}/delivery-stats`), 200, "delivery statistics");

      // Listen sessions: opened with no body at all.
      const session = passed(
        await tenant.post<{ id: string }>(`${ws}/listen-sessions`),
        200,
        "open a listen session",
      );
      passed(await tenant.get(`${ws}/listen-sessions`), 200, "list listen sessions");
      passed(await tenant.delete(`${ws}/listen-sessions/${session.body.id}`), 200, "end it");

      // Sign-in, who am I, sign-out.
      const user = await createUser(fixture.server, fixture.owner.id, "member");
      const anonymous = apiClient(prism.url, null);
      const signedIn = passed(
        await anonymous.post<{ token: string }>("/v1/auth/sessions", {
          email: user.email,
          password: PASSWORD,
        }),
        201,
        "sign in",
      );
      const session2 = apiClient(prism.url, signedIn.body.token);
      passed(await session2.get("/v1/auth/session"), 200, "who am I");
      passed(await session2.delete("/v1/auth/session"), 200, "sign out");
      // (A request without credentials is not a valid one: Prism answers it itself, unsent.)

      passed(await tenant.delete(member), 200, "delete a destination");
    });
  });
});
