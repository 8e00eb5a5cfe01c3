import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { signatureHeader } from "../../src/index.ts";
import { tempDir } from "../support/temp.ts";

/** The built example (tests run from dist/test, after `npm run build`). */
const receiverScript = fileURLToPath(new URL("../../examples/receiver.js", import.meta.url));
const secret = "whsec_ZXhhbXBsZS1yZWNlaXZlci10ZXN0LXNlY3JldA";

describe("examples/receiver", () => {
  let child: ChildProcessWithoutNullStreams;
  let output = "";
  let url = "";
  let cleanup: () => Promise<void>;

  /** Resolves with the first match of `pattern` in the receiver's stdout, now or later. */
  function outputMatching(pattern: RegExp): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const match = pattern.exec(output);
        if (match === null) return;
        child.stdout.off("data", check);
        child.off("exit", onExit);
        resolve(match);
      };
      const onExit = (): void => {
        reject(new Error(`the receiver exited; its output: ${output}`));
      };
      child.stdout.on("data", check);
      child.once("exit", onExit);
      check();
    });
  }

  before(async () => {
    const directory = await tempDir();
    cleanup = directory.cleanup;
    const secretFile = join(directory.path, "whsec.txt");
    await writeFile(secretFile, secret, { mode: 0o600 });
    child = spawn(process.execPath, [receiverScript, secretFile], {
      env: { PATH: process.env.PATH, PORT: "0" },
    });
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    url = (await outputMatching(/listening on (http:\/\/\S+)/))[1]!;
  });

  after(async () => {
    child.kill();
    if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
    await cleanup();
  });

  function send(id: string, body: string, signature: string): Promise<Response> {
    return fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-signature": signature,
      },
      body,
    });
  }

  const bodyOf = (id: string) =>
    JSON.stringify({ id, type: "job.completed", data: { object: {} } });
  const now = () => Math.floor(Date.now() / 1000);

  it("listens on loopback only", () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("answers 200 to a signed notification, then handles it", async () => {
    const body = bodyOf("evt_first");
    const response = await send("evt_first", body, signatureHeader(secret, now(), body));
    assert.equal(response.status, 200);
    assert.equal(await response.text(), "ok\n");
    await outputMatching(/notification evt_first: job\.completed/);
  });

  it('answers 200 "duplicate" to a repeat with the same Webhook-Id', async () => {
    const body = bodyOf("evt_repeated");
    const first = await send("evt_repeated", body, signatureHeader(secret, now(), body));
    const repeat = await send("evt_repeated", body, signatureHeader(secret, now(), body));
    assert.equal(first.status, 200);
    assert.equal(repeat.status, 200);
    assert.equal(await repeat.text(), "duplicate\n");
  });

  it("answers 400 with the error code to a notification that fails verification", async () => {
    const body = bodyOf("evt_forged");
    const forged = signatureHeader("whsec_not-the-receivers-secret", now(), body);
    const response = await send("evt_forged", body, forged);
    assert.equal(response.status, 400);
    assert.equal(await response.text(), "signature_mismatch\n");
  });
});
