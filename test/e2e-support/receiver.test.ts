import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { existsSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import {
  always,
  redirectTo,
  sequence,
  startReceiver,
  type Receiver,
  type ResponsePlan,
} from "../support/receiver.ts";
import { tempDir } from "../support/temp.ts";
import { createTestCa, sharedTestCa, type TestCa } from "../support/tls.ts";
import { runProcess, type ProcessRun } from "../support/process.ts";
import { sqlitePassOnly } from "../support/backend.ts";

interface ClientResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  reusedSocket: boolean;
}

interface PostOptions {
  /** The CA to trust; without it, Node's default trust store. */
  ca?: string;
  /** Host to connect to and verify: an IP, or a name resolved by `lookup`. */
  host: string;
  port: number;
  path?: string;
  body?: Buffer | string | (Buffer | string)[];
  headers?: Record<string, string>;
  lookup?: LookupFunction;
  agent?: Agent;
}

/** A POST with node:https, trusting only the test CA. */
function post(options: PostOptions): Promise<ClientResponse> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        method: "POST",
        host: options.host,
        port: options.port,
        path: options.path ?? "/",
        ca: options.ca,
        headers: options.headers,
        lookup: options.lookup,
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
            reusedSocket: req.reusedSocket,
          });
        });
      },
    );
    req.on("error", reject);
    const parts = options.body === undefined ? [] : [options.body].flat();
    for (const part of parts) req.write(part);
    req.end();
  });
}

/** A resolver that answers every name with 127.0.0.1, and records which names it was asked. */
function loopbackLookup(asked: string[]): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    asked.push(hostname);
    if (lookupOptions.all === true) callback(null, [{ address: "127.0.0.1", family: 4 }]);
    else callback(null, "127.0.0.1", 4);
  };
}

/** Runs a script with this Node binary and collects its output. */
function runNode(script: string, env: NodeJS.ProcessEnv): Promise<ProcessRun> {
  return runProcess(process.execPath, ["--input-type=module", "-e", script], { env });
}

/** The parent's environment without anything that could route or alter a child's fetch. */
function childEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of Object.keys(env)) {
    if (/^(https?_proxy|all_proxy|no_proxy|node_use_env_proxy|node_test_context)$/i.test(name)) {
      env[name] = undefined;
    }
  }
  if (extra.NODE_EXTRA_CA_CERTS === undefined) env.NODE_EXTRA_CA_CERTS = undefined;
  env.NODE_OPTIONS = undefined;
  env.NODE_TLS_REJECT_UNAUTHORIZED = undefined;
  return env;
}

const fetchScript = `
try {
  const response = await fetch(process.env.TARGET_URL, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ from: "child" }),
  });
  const body = await response.text();
  process.stdout.write(JSON.stringify({ status: response.status, body }), () => process.exit(0));
} catch (error) {
  process.stdout.write(
    JSON.stringify({ error: String(error), code: error?.cause?.code ?? null }),
    () => process.exit(1),
  );
}
`;

describe("test CA", { skip: sqlitePassOnly }, () => {
  it("makes a CA and a leaf that Node verifies for every listed name and address", async () => {
    const dir = await tempDir();
    try {
      const ca = await createTestCa(join(dir.path, "ca"));
      assert.ok(existsSync(ca.caCertPath));
      const caCert = new X509Certificate(ca.caCertPem);
      const leaf = new X509Certificate(ca.certPem);
      assert.equal(caCert.ca, true);
      assert.equal(leaf.ca, false);
      assert.ok(leaf.verify(caCert.publicKey), "the leaf is signed by the CA");
      assert.ok(leaf.checkIssued(caCert));
      assert.deepEqual(leaf.keyUsage, ["1.3.6.1.5.5.7.3.1"], "extended key usage is serverAuth");
      assert.equal(leaf.publicKey.asymmetricKeyDetails?.namedCurve, "prime256v1");
      const lifetimeMs = Date.parse(leaf.validTo) - Date.parse(leaf.validFrom);
      assert.ok(lifetimeMs <= 3 * 24 * 3600 * 1000, `short-lived, got ${leaf.validTo}`);
      assert.ok(Date.parse(leaf.validFrom) <= Date.now());
      for (const name of ["localhost", "hooks.test", "rebind.test"]) {
        assert.equal(leaf.checkHost(name), name, name);
      }
      assert.equal(leaf.checkHost("a.hooks.test"), "*.hooks.test");
      // `*.test` is in the certificate, but a wildcard over a single-label suffix is never
      // honoured: list concrete names, or use `*.hooks.test` (one label only).
      assert.match(leaf.subjectAltName ?? "", /DNS:\*\.test,/);
      assert.equal(leaf.checkHost("anything.test"), undefined);
      assert.equal(leaf.checkHost("a.b.hooks.test"), undefined);
      for (const ip of ["127.0.0.1", "127.0.0.2", "::1"]) {
        assert.equal(leaf.checkIP(ip), ip, ip);
      }
      assert.equal(leaf.checkIP("127.0.0.3"), undefined);
    } finally {
      await dir.cleanup();
    }
  });

  it("shares one CA per process", async () => {
    const [first, second] = await Promise.all([sharedTestCa(), sharedTestCa()]);
    assert.equal(first, second);
    assert.equal(await sharedTestCa(), first);
  });
});

describe("HTTPS receiver", { skip: sqlitePassOnly }, () => {
  let ca: TestCa;
  before(async () => {
    ca = await sharedTestCa();
  });

  /** Starts a receiver that is closed after the test, whatever happens. */
  async function receiverFor(
    t: { after: (fn: () => Promise<void>) => void },
    options: Omit<Parameters<typeof startReceiver>[0], "ca"> = {},
  ): Promise<Receiver> {
    const receiver = await startReceiver({ ca, ...options });
    t.after(() => receiver.close());
    return receiver;
  }

  it("records the exact raw bytes of a request on 127.0.0.1 and answers 200 ok", async (t) => {
    const receiver = await receiverFor(t);
    assert.match(receiver.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(receiver.url, `https://127.0.0.1:${receiver.port}`);
    const raw = Buffer.concat([
      Buffer.from('{"event":"ping","text":"h\u00e9llo"}'),
      Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a]),
    ]);
    // Written in two pieces with no content-length: chunked on the wire.
    const response = await post({
      ca: ca.caCertPem,
      host: "127.0.0.1",
      port: receiver.port,
      path: "/hooks/a?x=1",
      body: [raw.subarray(0, 7), raw.subarray(7)],
      headers: { "content-type": "application/json", "x-signature": "v1=abc" },
    });
    assert.equal(response.status, 200);
    assert.equal(response.body, "ok");
    assert.equal(receiver.requests.length, 1);
    const [received] = receiver.requests;
    assert.equal(received!.method, "POST");
    assert.equal(received!.path, "/hooks/a?x=1");
    assert.equal(received!.headers["x-signature"], "v1=abc");
    assert.equal(received!.headers["transfer-encoding"], "chunked");
    assert.equal(received!.headers.host, `127.0.0.1:${receiver.port}`);
    assert.deepEqual(received!.rawBody, raw);
    assert.equal(received!.bodyText, raw.toString("utf8"));
    assert.ok(Math.abs(received!.receivedAt - Date.now()) < 10_000);
  });

  it("listens on ::1 and is verified by IPv6 address", async (t) => {
    const receiver = await receiverFor(t, { host: "::1" });
    assert.equal(receiver.url, `https://[::1]:${receiver.port}`);
    const response = await post({
      ca: ca.caCertPem,
      host: "::1",
      port: receiver.port,
      body: "six",
      headers: { "content-length": "3" },
    });
    assert.equal(response.status, 200);
    assert.equal((await receiver.waitForRequests(1))[0]!.bodyText, "six");
  });

  it("is verified by name (hooks.test, *.hooks.test) while connecting to 127.0.0.1", async (t) => {
    const receiver = await receiverFor(t);
    const asked: string[] = [];
    for (const name of ["hooks.test", "rebind.test", "a1.hooks.test", "localhost"]) {
      const response = await post({
        ca: ca.caCertPem,
        host: name,
        port: receiver.port,
        lookup: loopbackLookup(asked),
        body: name,
      });
      assert.equal(response.status, 200, name);
    }
    assert.deepEqual(asked, ["hooks.test", "rebind.test", "a1.hooks.test", "localhost"]);
    assert.deepEqual(
      receiver.requests.map((request) => [request.headers.host, request.bodyText]),
      [
        [`hooks.test:${receiver.port}`, "hooks.test"],
        [`rebind.test:${receiver.port}`, "rebind.test"],
        [`a1.hooks.test:${receiver.port}`, "a1.hooks.test"],
        [`localhost:${receiver.port}`, "localhost"],
      ],
    );
  });

  it("fails verification for a name outside the certificate and for an untrusted client", async (t) => {
    const receiver = await receiverFor(t);
    for (const name of ["hooks.example", "any.test"]) {
      await assert.rejects(
        post({ ca: ca.caCertPem, host: name, port: receiver.port, lookup: loopbackLookup([]) }),
        { code: "ERR_TLS_CERT_ALTNAME_INVALID" },
        name,
      );
    }
    await assert.rejects(post({ host: "127.0.0.1", port: receiver.port }), {
      code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    });
    assert.equal(receiver.requests.length, 0);
  });

  it("answers with the responder's status, headers and body, given the request index", async (t) => {
    const indexes: number[] = [];
    const receiver = await receiverFor(t, {
      respond: (request, index) => {
        indexes.push(index);
        return {
          status: 201,
          headers: { "x-echo": request.bodyText, "content-type": "application/json" },
          body: JSON.stringify({ index }),
        };
      },
    });
    for (const body of ["one", "two"]) {
      const response = await post({
        ca: ca.caCertPem,
        host: "127.0.0.1",
        port: receiver.port,
        body,
      });
      assert.equal(response.status, 201);
      assert.equal(response.headers["x-echo"], body);
      assert.equal(response.headers["content-type"], "application/json");
    }
    assert.deepEqual(indexes, [0, 1]);

    receiver.setResponder(async () => {
      await Promise.resolve();
      return { status: 503, headers: { "retry-after": "7" } };
    });
    const unavailable = await post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port });
    assert.equal(unavailable.status, 503);
    assert.equal(unavailable.headers["retry-after"], "7");
    assert.equal(unavailable.body, "");

    receiver.setResponder(() => {
      throw new Error("boom");
    });
    const failed = await post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port });
    assert.equal(failed.status, 500);
    assert.match(failed.body, /boom/);
    assert.equal(receiver.requests.length, 4);
  });

  it("delays an answer by delayMs, after recording the request", async (t) => {
    const receiver = await receiverFor(t, {
      respond: () => ({ status: 202, body: "late", delayMs: 300 }),
    });
    const started = Date.now();
    const pending = post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port, body: "x" });
    const [recorded] = await receiver.waitForRequests(1);
    const response = await pending;
    const elapsed = Date.now() - started;
    assert.equal(response.status, 202);
    assert.equal(response.body, "late");
    assert.ok(elapsed >= 290, `answered after ${elapsed} ms`);
    assert.ok(Date.now() - recorded!.receivedAt >= 290, "recorded before the delay");
  });

  it("hangs forever when asked, and close() still finishes promptly", async () => {
    const receiver = await startReceiver({ ca, respond: () => ({ status: 200, hang: true }) });
    let closedReceiver = false;
    try {
      const settled = post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port }).then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      );
      await receiver.waitForRequests(1);
      // A delayed answer on a second connection is cancelled too.
      receiver.setResponder(() => ({ status: 200, delayMs: 60_000 }));
      const delayed = post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port }).then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      );
      await receiver.waitForRequests(2);

      const started = Date.now();
      await receiver.close();
      closedReceiver = true;
      const closeMs = Date.now() - started;
      assert.ok(closeMs < 1000, `close() took ${closeMs} ms`);

      for (const outcome of [await settled, await delayed]) {
        assert.ok("error" in outcome, "the client never got an answer");
        assert.match(String(outcome.error), /socket hang up|ECONNRESET/);
      }
    } finally {
      if (!closedReceiver) await receiver.close();
    }
  });

  it("sequence() plays its plans in order and repeats the last; always() and redirectTo()", async (t) => {
    const plans: [ResponsePlan, ...ResponsePlan[]] = [
      { status: 500, body: "first" },
      { status: 429, headers: { "retry-after": "1" } },
      { status: 200, body: "done" },
    ];
    const receiver = await receiverFor(t, { respond: sequence(...plans) });
    const statuses: [number, string][] = [];
    for (let i = 0; i < 5; i++) {
      const response = await post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port });
      statuses.push([response.status, response.body]);
    }
    assert.deepEqual(statuses, [
      [500, "first"],
      [429, ""],
      [200, "done"],
      [200, "done"],
      [200, "done"],
    ]);

    // A sequence installed mid-test starts from its first plan.
    receiver.setResponder(sequence({ status: 418 }, { status: 204 }));
    const first = await post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port });
    assert.equal(first.status, 418);

    receiver.setResponder(always(410));
    const gone = await post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port });
    assert.equal(gone.status, 410);
    assert.equal(gone.body, "Gone");

    receiver.setResponder(redirectTo("https://127.0.0.1:1/elsewhere"));
    const redirect = await post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port });
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.location, "https://127.0.0.1:1/elsewhere");
  });

  it("keeps connections alive between requests", async (t) => {
    const receiver = await receiverFor(t);
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: ca.caCertPem });
    t.after(() => {
      agent.destroy();
    });
    const first = await post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port, agent });
    const second = await post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port, agent });
    assert.equal(first.reusedSocket, false);
    assert.equal(second.reusedSocket, true);
    assert.equal(receiver.requests[1]!.headers.connection, "keep-alive");
  });

  it("waitForRequests resolves when enough arrive and times out with a helpful message", async (t) => {
    const receiver = await receiverFor(t);
    const waiting = receiver.waitForRequests(2);
    await Promise.all([
      post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port, path: "/a" }),
      post({ ca: ca.caCertPem, host: "127.0.0.1", port: receiver.port, path: "/b" }),
    ]);
    const got = await waiting;
    assert.deepEqual(got.map((request) => request.path).sort(), ["/a", "/b"]);
    assert.equal((await receiver.waitForRequests(1)).length, 2, "already there: resolves at once");

    await assert.rejects(receiver.waitForRequests(3, 100), (error: Error) => {
      assert.match(error.message, /expected at least 3 request\(s\) within 100 ms/);
      assert.match(error.message, /but 2 arrived: POST \/[ab], POST \/[ab]/);
      assert.ok(error.message.includes(receiver.url));
      return true;
    });

    const pending = receiver.waitForRequests(5);
    await receiver.close();
    await assert.rejects(pending, /closed while waiting for 5 request\(s\); 2 arrived/);
  });

  it("is trusted by a child process's global fetch through NODE_EXTRA_CA_CERTS", async (t) => {
    const receiver = await receiverFor(t, {
      respond: (request) => ({ status: 200, body: `got ${request.bodyText}` }),
    });
    const target = `${receiver.url}/`;
    assert.match(target, /^https:\/\/127\.0\.0\.1:\d+\/$/);

    const trusted = await runNode(
      fetchScript,
      childEnv({ NODE_EXTRA_CA_CERTS: ca.caCertPath, TARGET_URL: target }),
    );
    assert.equal(trusted.code, 0, `child failed: ${trusted.stdout} ${trusted.stderr}`);
    assert.deepEqual(JSON.parse(trusted.stdout), { status: 200, body: 'got {"from":"child"}' });
    assert.equal(receiver.requests.length, 1);
    assert.equal(receiver.requests[0]!.headers["content-type"], "application/json");

    // Control: without the CA, the same fetch is refused.
    const untrusted = await runNode(fetchScript, childEnv({ TARGET_URL: target }));
    assert.equal(untrusted.code, 1, `child output: ${untrusted.stdout} ${untrusted.stderr}`);
    assert.equal(
      (JSON.parse(untrusted.stdout) as { code: unknown }).code,
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    );
    assert.equal(receiver.requests.length, 1);
  });
});
