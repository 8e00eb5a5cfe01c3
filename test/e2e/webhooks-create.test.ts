import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { chmod, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertExit, envelope, listedDestinations, svcAgainst } from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { hmacSha256ByDefinition, storedSigningSecret } from "../support/signing.ts";
import type { SvcRun, SvcRunOptions } from "../support/svc.ts";

const url = "https://public.example.test/hooks";

interface Created {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  secret: string;
  secret_file: string;
}

describe("svc webhooks create", () => {
  let fixture: ServerFixture;
  let svc: (args: readonly string[], options?: SvcRunOptions) => Promise<SvcRun>;
  let fileCount = 0;
  const newPath = (): string => join(fixture.dir, `secret-${(fileCount += 1)}.txt`);

  before(async () => {
    fixture = await serverFixture();
    svc = svcAgainst(fixture);
  });
  after(() => fixture.dispose());

  /** Runs `create` expecting it to be refused, and shows that nothing was registered. */
  const assertRegistersNothing = async (args: readonly string[], exit: number, error: RegExp) => {
    const before = await listedDestinations(fixture);
    const run = await svc(["webhooks", "create", ...args]);
    assertExit(run, exit);
    assert.match(run.stderr, error);
    assert.equal(run.stdout, "");
    assert.deepEqual(await listedDestinations(fixture), before, "nothing was registered");
    return run;
  };

  it("registers an active destination subscribed to * by default (SPEC 2.1, 3.1)", async () => {
    const run = await svc(["webhooks", "create", "--url", url, "--output", newPath(), "--json"]);
    assertExit(run, 0);
    const { ok, data } = envelope<Created>(run);
    assert.equal(ok, true);
    assert.match(data.id, /^dst_/);
    assert.equal(data.url, url);
    assert.deepEqual(data.events, ["*"]);
    assert.equal(data.active, true);
    const listed = (await listedDestinations(fixture)).find((item) => item.id === data.id);
    assert.equal(listed?.active, true);
  });

  it("saves the secret alone in a new file of mode 0600, and prints it nowhere (SPEC 4.3)", async () => {
    const output = newPath();
    const run = await svc(["webhooks", "create", "--url", url, "--output", output]);
    assertExit(run, 0);
    assert.equal((await stat(output)).mode & 0o777, 0o600);
    const secret = await readFile(output, "utf8");
    assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/, "the whole file is the secret, no newline");
    assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret));
    assert.match(run.stdout, /^secret: +\[redacted\]$/m);
    assert.match(run.stdout, new RegExp(`^secret_file: +${output}$`, "m"));
    assert.match(run.stderr, /saved to .*0600/);
  });

  it("the file holds the exact secret the server signs with, a working HMAC-SHA256 key (SPEC 6, CONTRACT Notifications)", async () => {
    const output = newPath();
    const run = await svc(["webhooks", "create", "--url", url, "--output", output, "--json"]);
    assertExit(run, 0);
    const { id } = envelope<Created>(run).data;
    const fileSecret = await readFile(output, "utf8");
    assert.equal(fileSecret, await storedSigningSecret(fixture.server.dataDir, id));

    // A receiver verifies `Webhook-Signature: t=<t>,v1=<hex>` over `<t>.<body as received>`.
    const timestamp = String(Math.floor(Date.now() / 1000));
    const body = `{"id":"evt_1","type":"job.completed","api_version":"2026-11-01","created":${timestamp},"data":{"object":{"id":"job_1"}}}`;
    const signed = Buffer.from(`${timestamp}.${body}`, "utf8");
    const signature = createHmac("sha256", fileSecret).update(signed).digest("hex");
    const independent = hmacSha256ByDefinition(Buffer.from(fileSecret, "utf8"), signed);
    assert.equal(signature, independent);
    const header = `t=${timestamp},v1=${signature}`;
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.notEqual(
      createHmac("sha256", `${fileSecret}\n`).update(signed).digest("hex"),
      independent,
      "the key is the file's content exactly: a trailing newline would change it",
    );
  });

  it("subscribes to the events of --events, given as CSV (SPEC 4.3)", async () => {
    const run = await svc([
      "webhooks",
      "create",
      "--url",
      url,
      "--events",
      "job.completed, collection.completed",
      "--output",
      newPath(),
      "--json",
    ]);
    assertExit(run, 0);
    assert.deepEqual(envelope<Created>(run).data.events, ["job.completed", "collection.completed"]);
  });

  it("reads url and events from --stdin JSON, and a flag wins over the same member", async () => {
    const input = JSON.stringify({
      url: "https://public.example.test/from-json",
      events: ["job.failed"],
    });
    const fromJson = await svc(["webhooks", "create", "--stdin", "--output", newPath(), "--json"], {
      input,
    });
    assertExit(fromJson, 0);
    assert.equal(envelope<Created>(fromJson).data.url, "https://public.example.test/from-json");
    assert.deepEqual(envelope<Created>(fromJson).data.events, ["job.failed"]);

    const flagWins = await svc(
      ["webhooks", "create", "--from-stdin", "--url", url, "--output", newPath(), "--json"],
      { input },
    );
    assertExit(flagWins, 0);
    assert.equal(envelope<Created>(flagWins).data.url, url, "--url wins over the JSON url");
    assert.deepEqual(envelope<Created>(flagWins).data.events, ["job.failed"], "the rest is kept");
  });

  it("stdout carries the result with the secret redacted, also with --raw", async () => {
    const output = newPath();
    const run = await svc(["webhooks", "create", "--url", url, "--output", output, "--raw"]);
    assertExit(run, 0);
    const body = JSON.parse(run.stdout) as Created;
    assert.equal(body.secret, "[redacted]");
    assert.equal(body.url, url);
    assert.ok(!run.stdout.includes(await readFile(output, "utf8")));
  });

  it("never overwrites an existing --output file, and then registers nothing (SPEC 4.3, 7)", async () => {
    const existing = newPath();
    await writeFile(existing, "keep me");
    await assertRegistersNothing(
      ["--url", url, "--output", existing],
      2,
      /already exists.*\(output_exists\)/,
    );
    assert.equal(await readFile(existing, "utf8"), "keep me");
  });

  it("never writes through a symlink at --output, and then registers nothing", async () => {
    const target = join(fixture.dir, "symlink-target");
    const link = newPath();
    await symlink(target, link);
    await assertRegistersNothing(["--url", url, "--output", link], 2, /output_exists/);
    await assert.rejects(stat(target), { code: "ENOENT" });
  });

  it("refuses a missing parent directory before registering anything (SPEC 4.3, 7)", async () => {
    const output = join(fixture.dir, "no", "such", "dir", "secret.txt");
    await assertRegistersNothing(
      ["--url", url, "--output", output],
      2,
      /ENOENT.*\(output_not_writable\)/,
    );
  });

  it("refuses a parent that is a regular file before registering anything", async () => {
    const file = newPath();
    await writeFile(file, "");
    await assertRegistersNothing(
      ["--url", url, "--output", join(file, "secret.txt")],
      2,
      /ENOTDIR.*\(output_not_writable\)/,
    );
  });

  it("refuses a parent directory it may not write to before registering anything", async () => {
    if (process.getuid?.() === 0) {
      // Root ignores directory permissions; sysfs refuses new files even to root.
      await assertRegistersNothing(
        ["--url", url, "--output", "/sys/svc-secret.txt"],
        2,
        /\((EACCES|EROFS|EPERM)\).*\(output_not_writable\)/,
      );
      return;
    }
    const locked = join(fixture.dir, "locked");
    await mkdir(locked, { mode: 0o500 });
    try {
      await assertRegistersNothing(
        ["--url", url, "--output", join(locked, "secret.txt")],
        2,
        /EACCES.*\(output_not_writable\)/,
      );
    } finally {
      await chmod(locked, 0o700);
    }
  });

  it("says plainly, naming the destination, when the secret cannot be saved after registration", async () => {
    const output = newPath();
    // Files may not grow (ulimit -f 0): the secret file is created, but writing it fails.
    const launcher = ["bash", "-c", 'trap "" XFSZ; ulimit -f 0; exec "$@"', "bash"];
    const before = await listedDestinations(fixture);
    const run = await svc(["webhooks", "create", "--url", url, "--output", output], { launcher });
    assertExit(run, 7);
    const match =
      /^error: Destination (dst_\w+) was registered, but its signing secret could not be saved to (.+) \(EFBIG\).*\(secret_not_saved\)$/m.exec(
        run.stderr,
      );
    assert.ok(match, run.stderr);
    assert.equal(match[2], output);
    const registered = (await listedDestinations(fixture)).filter(
      (item) => !before.some((old) => old.id === item.id),
    );
    assert.deepEqual(
      registered.map((item) => item.id),
      [match[1]],
      "the id named is the one registered",
    );
    assert.match(run.stderr, new RegExp(`svc webhooks delete ${match[1]} --yes`));
    await assert.rejects(stat(output), { code: "ENOENT" }, "no partial secret file is left");
  });

  it("requires --output before sending anything", async () => {
    await assertRegistersNothing(["--url", url], 2, /--output <path> is required/);
  });

  it("refuses a URL that is not https or carries credentials, before sending (SPEC 2.1, 7)", async () => {
    await assertRegistersNothing(
      ["--url", "http://public.example.test/", "--output", newPath()],
      2,
      /must use https:\/\//,
    );
    await assertRegistersNothing(
      ["--url", "https://user:pw@public.example.test/", "--output", newPath()],
      2,
      /user name or password/,
    );
    await assertRegistersNothing(
      ["--url", `https://public.example.test/${"a".repeat(2048)}`, "--output", newPath()],
      2,
      /at most 2048/,
    );
  });

  it("a URL on a private network is rejected by the server: exit 3, nothing registered, no file left", async () => {
    const output = newPath();
    await assertRegistersNothing(
      ["--url", "https://private.example.test/hooks", "--output", output],
      3,
      /^error: .*not on the public internet.*\(url_not_public\)$/m,
    );
    await assert.rejects(stat(output), { code: "ENOENT" });
  });

  it("refuses an event name outside the allowed set, naming it (SPEC 2.4, 7)", async () => {
    await assertRegistersNothing(
      ["--url", url, "--events", "job.completed,job.started", "--output", newPath()],
      2,
      /Unknown event "job\.started"\. Allowed: \*, job\.completed, job\.failed, collection\.completed/,
    );
  });

  it("refuses malformed --stdin JSON and unknown members, pointing at --help", async () => {
    const malformed = await svc(["webhooks", "create", "--stdin", "--output", newPath()], {
      input: '{"url": ',
    });
    assertExit(malformed, 2);
    assert.match(malformed.stderr, /not valid JSON.*svc webhooks create --help.*\(usage_error\)/);
    const secret = await svc(["webhooks", "create", "--stdin", "--output", newPath()], {
      input: JSON.stringify({ url, secret: "whsec_chosen" }),
    });
    assertExit(secret, 2);
    assert.match(secret.stderr, /unknown member "secret"/);
  });
});
