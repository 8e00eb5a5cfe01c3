import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertExit, clientEnv, envelope, listedDestinations } from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { startLossyProxy } from "../support/lossy-proxy.ts";
import { runSvc } from "../support/svc.ts";

describe("svc retries a request whose answer was lost, under the same Idempotency-Key", () => {
  let fixture: ServerFixture;

  before(async () => {
    fixture = await serverFixture();
  });
  after(() => fixture.dispose());

  it("creates one destination and still writes its secret when the first answer is lost", async () => {
    const proxy = await startLossyProxy(new URL(fixture.server.url));
    try {
      const before = (await listedDestinations(fixture)).length;
      const secretFile = join(fixture.dir, "retried-secret.txt");
      const run = await runSvc(
        [
          "webhooks",
          "create",
          "--url",
          "https://public.example.test/retry",
          "--output",
          secretFile,
          "--json",
        ],
        { env: { ...clientEnv(fixture), SERVICE_API_URL: proxy.url } },
      );
      assertExit(run, 0);
      assert.equal(proxy.dropped(), 1, "the first answer was lost on the way");
      assert.match(run.stderr, /sending the same request again/);

      const destinations = await listedDestinations(fixture);
      assert.equal(destinations.length, before + 1, "exactly one destination");
      const created = envelope<{ id: string }>(run).data;
      assert.equal(destinations[0]?.id, created.id, "the replayed answer names it");
      const secret = await readFile(secretFile, "utf8");
      assert.match(secret, /^whsec_[A-Za-z0-9_-]+$/);
    } finally {
      await proxy.close();
    }
  });

  it("sends the same generated key on every try of one command, and a new one per command", async () => {
    const dryRun = async (): Promise<string> => {
      const run = await runSvc(["events", "send", "--type", "job.failed", "--dry-run"], {
        env: clientEnv(fixture),
      });
      assertExit(run, 0);
      const match = /^Idempotency-Key: (svc-[0-9a-f-]{36})$/m.exec(run.stdout);
      assert.ok(match?.[1], run.stdout);
      return match[1];
    };
    assert.notEqual(await dryRun(), await dryRun());
  });

  it("offers --idempotency-key on every command that changes something", async () => {
    for (const command of [
      ["webhooks", "create"],
      ["webhooks", "update"],
      ["webhooks", "delete"],
      ["events", "send"],
    ]) {
      const run = await runSvc([...command, "--help"]);
      assertExit(run, 0);
      assert.match(run.stdout, /--idempotency-key <key>/, command.join(" "));
    }
  });
});
