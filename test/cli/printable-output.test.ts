import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { printable } from "../../src/cli/render/printable.ts";
import { runCliInMemory } from "../support/in-memory-cli.ts";
import { json, startStubApi, type StubApi } from "../support/stub-api.ts";
import { sqlitePassOnly } from "../support/backend.ts";

/**
 * What a destination stored before URLs were checked for such characters (or any other field
 * the server returns) may hold: escape sequences that retitle the window, clear the screen or
 * set the clipboard, line breaks and a NUL that spoof rows, a right-to-left override, a lone
 * surrogate, C1 controls.
 */
const hostile =
  "https://8.8.8.8/ok\u001b]0;TITLE\u0007\u001b[2J\u001b]52;c;aGk=\u0007\r\nFAKE ROW\u0000\u202egpj.exe\ud800\u0085\u009b";

/** No character of these may reach a person's terminal as it is. */
// eslint-disable-next-line no-control-regex -- control characters are what it matches
const unprintable = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e\ud800-\udfff]/;

const destination = {
  id: "dst_1",
  url: hostile,
  events: ["*", "job.\u001b[31mcompleted"],
  active: true,
  created_at: "2026-11-01T00:00:00.000Z",
  updated_at: "2026-11-01T00:00:00.000Z",
  // In the contract's shape (the CLI checks it), with hostile text where text may be.
  last_delivery: {
    status: "failed",
    attempts: 3,
    last_attempt_at: "2026-11-01T00:00:00.000Z",
    event: "job.completed",
    notification_id: "evt_1",
    next_attempt_at: null,
    last_status_code: null,
    circuit: null,
    last_error: "refused \u001b[2J\u202e",
    [`odd\u001b[2Jname`]: 1,
  },
  circuit: {
    state: "open",
    open_until: "2026-11-01T01:00:00.000Z",
    opens: 1,
    reason: "1 attempt failed (last: \u001b[2J\u202e)",
  },
};

describe(
  "what svc prints for a person is printable (decision 28)",
  { skip: sqlitePassOnly },
  () => {
    let stub: StubApi;
    let env: NodeJS.ProcessEnv;
    before(async () => {
      stub = await startStubApi();
      env = {
        SERVICE_API_URL: stub.url,
        SERVICE_API_KEY: "svc_test",
        SERVICE_WORKSPACE_ID: "ws_1",
      };
    });
    after(() => stub.close());

    const run = (args: readonly string[], terminal = true) =>
      runCliInMemory(args, { env, terminal });

    it("escapes every unprintable character as \\uXXXX, keeping the rest", () => {
      assert.equal(
        printable("a\u001bb\u202ec\ud800d\u0085e\u2028f\u00e9g😀"),
        "a\\u001bb\\u202ec\\ud800d\\u0085e\\u2028fég😀",
      );
      assert.equal(printable("one\ntwo", { lineBreaks: true }), "one\ntwo");
      assert.equal(printable("one\ntwo\r"), "one\\u000atwo\\u000d");
    });

    it("webhooks get (key: value) shows the URL, the events and a member's name escaped", async () => {
      stub.answer(json(200, destination));
      const result = await run(["webhooks", "get", "dst_1"]);
      assert.equal(result.status, 0, result.stderr);
      assert.doesNotMatch(result.stdout, unprintable);
      assert.match(result.stdout, /url: +https:\/\/8\.8\.8\.8\/ok\\u001b\]0;TITLE\\u0007/);
      assert.match(
        result.stdout,
        /\\u000d\\u000aFAKE ROW\\u0000\\u202egpj\.exe\\ud800\\u0085\\u009b/,
      );
      assert.match(result.stdout, /job\.\\u001b\[31mcompleted/);
      assert.match(result.stdout, /last_error: +refused \\u001b\[2J\\u202e/);
      assert.match(result.stdout, /odd\\u001b\[2Jname: +1/, "a member's name too");
    });

    it("webhooks list (a table) shows one line per destination, escaped", async () => {
      stub.answer(
        json(200, { data: [destination, { ...destination, id: "dst_2" }], next_cursor: null }),
      );
      const result = await run(["webhooks", "list"]);
      assert.equal(result.status, 0, result.stderr);
      assert.doesNotMatch(result.stdout, unprintable);
      assert.equal(result.stdout.trimEnd().split("\n").length, 3, "a header and two rows");
    });

    it("--format yaml escapes what JSON's escapes leave alone", async () => {
      stub.answer(json(200, destination));
      const result = await run(["webhooks", "get", "dst_1", "--format", "yaml"]);
      assert.equal(result.status, 0, result.stderr);
      assert.doesNotMatch(result.stdout, unprintable);
      assert.match(result.stdout, /\\u202egpj/);
    });

    it("--field escapes on a terminal, and gives the exact value to a pipe", async () => {
      stub.answer(json(200, destination));
      const onTerminal = await run(["webhooks", "get", "dst_1", "--field", "url"]);
      assert.doesNotMatch(onTerminal.stdout, unprintable);
      const piped = await run(["webhooks", "get", "dst_1", "--field", "url"], false);
      // As UTF-8 carries it: the lone surrogate becomes U+FFFD on the way.
      assert.equal(piped.stdout, `${Buffer.from(hostile).toString("utf8")}\n`);
    });

    it("--json gives the exact value, every unprintable character a JSON escape", async () => {
      stub.answer(json(200, destination));
      for (const pretty of [[], ["--pretty"]]) {
        const result = await run(["webhooks", "get", "dst_1", "--json", ...pretty]);
        assert.doesNotMatch(result.stdout.trimEnd(), unprintable);
        const envelope = JSON.parse(result.stdout) as { data: typeof destination };
        assert.deepEqual(envelope.data, destination);
      }
    });

    it("an error message from the server is printed escaped, on one line", async () => {
      stub.answer(
        json(404, {
          error: { code: "not_found", message: `No \u001b]0;pwned\u0007 here.\nerror: fake` },
        }),
      );
      const result = await run(["webhooks", "get", "dst_1"]);
      assert.equal(result.status, 5);
      assert.doesNotMatch(result.stderr, unprintable);
      assert.match(result.stderr, /No \\u001b\]0;pwned\\u0007 here\./);
    });

    it("--raw escapes on a terminal what JSON leaves alone, and gives a pipe the exact bytes", async () => {
      // A delivery whose receiver answered a CSI (U+009B) and a right-to-left override: JSON
      // escapes neither, so the body carries them as they are.
      const body = JSON.stringify({
        ...destination,
        last_delivery: { ...destination.last_delivery, last_error: "\u009b2J\u202eevil\u2066" },
      });
      stub.answer((_request, response) => {
        response.writeHead(200, { "content-type": "application/json" }).end(body);
      });
      const onTerminal = await run(["webhooks", "get", "dst_1", "--raw"]);
      assert.equal(onTerminal.status, 0, onTerminal.stderr);
      assert.doesNotMatch(onTerminal.stdout, unprintable);
      assert.doesNotMatch(onTerminal.stdout, /[\u2066-\u2069]/);
      assert.match(onTerminal.stdout, /\\u009b2J\\u202eevil\\u2066/);
      const piped = await run(["webhooks", "get", "dst_1", "--raw"], false);
      assert.equal(piped.stdout, `${body}\n`);
    });

    it("a note on stderr quoting the server's message is printed escaped", async () => {
      let calls = 0;
      stub.answer((request, response) => {
        calls += 1;
        const answer =
          calls === 1
            ? json(
                409,
                {
                  error: { code: "idempotency_in_progress", message: "Busy \u009b2J\u202e. Wait" },
                },
                { "retry-after": "0" },
              )
            : json(200, destination);
        answer(request, response);
      });
      const result = await run(["webhooks", "get", "dst_1"]);
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stderr, /note: Busy \\u009b2J\\u202e;/);
      assert.doesNotMatch(result.stderr, unprintable);
    });
  },
);
