import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { answerBytes, answerText, HttpSender } from "../../src/delivery/http-sender.ts";

/**
 * What an attempt keeps of the receiver's answer for the delivery log (decision 30): its first
 * 2 KiB, as text. A plain-HTTP receiver in this process answers what the path names.
 */
describe("the receiver's answer, kept with the attempt", () => {
  let server: Server;
  let base: string;
  const connections = new Set<unknown>();
  const answers: Record<string, Buffer> = {
    "/short": Buffer.from('{"ok":true}'),
    "/long": Buffer.from("x".repeat(3000)),
    "/huge": Buffer.from("y".repeat(100_000)),
    "/empty": Buffer.alloc(0),
    "/binary": Buffer.from([0x61, 0x00, 0x62, 0xff, 0xfe, 0x63]),
  };

  before(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        // `/…/declared`: the same answer with its Content-Length (read in one piece), else
        // chunked (read chunk by chunk).
        const path = request.url ?? "";
        const answer = answers[path.replace(/\/declared$/, "")] ?? Buffer.alloc(0);
        const headers = path.endsWith("/declared") ? { "content-length": answer.length } : {};
        response.writeHead(200, headers).end(answer);
      });
    });
    server.on("connection", (socket) => connections.add(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const sendTo = async (sender: HttpSender, path: string) =>
    sender.send({
      url: new URL(`${base}${path}`),
      headers: { "content-type": "application/json" },
      body: "{}",
      timeoutMs: 2000,
      addresses: ["127.0.0.1"],
    });

  for (const declared of ["", "/declared"]) {
    it(`keeps a short answer whole, the first 2 KiB of a long one, and nothing of an empty one (${declared === "" ? "chunked" : "with Content-Length"})`, async () => {
      const sender = new HttpSender({ timeoutMs: 2000 });
      const send = async (sender: HttpSender, path: string) => sendTo(sender, `${path}${declared}`);
      try {
        assert.deepEqual(await send(sender, "/short"), {
          kind: "response",
          statusCode: 200,
          body: '{"ok":true}',
        });
        const long = await send(sender, "/long");
        assert.equal(long.kind === "response" ? long.body : null, "x".repeat(answerBytes));
        const huge = await send(sender, "/huge");
        assert.equal(huge.kind === "response" ? huge.body?.length : null, answerBytes);
        assert.deepEqual(await send(sender, "/empty"), { kind: "response", statusCode: 200 });
      } finally {
        await sender.close();
      }
    });
  }

  it("reuses its connection after an answer it read whole", async () => {
    const sender = new HttpSender({ timeoutMs: 2000 });
    const send = sendTo;
    try {
      // A fresh agent opens a second connection for its second request (undici, with or
      // without this reading): warm the pool first.
      await send(sender, "/short");
      await send(sender, "/short");
      connections.clear();
      await send(sender, "/long");
      await send(sender, "/short");
      assert.equal(connections.size, 0, "no new connection after a 3,000-byte answer");
    } finally {
      await sender.close();
    }
  });

  it("writes the answer as UTF-8 text, a NUL or an invalid byte as U+FFFD", () => {
    assert.equal(answerText(answers["/binary"] ?? Buffer.alloc(0)), "a\ufffdb\ufffd\ufffdc");
    // A character cut at the 2 KiB boundary is one U+FFFD, not a broken string.
    assert.equal(answerText(Buffer.from("é").subarray(0, 1)), "\ufffd");
  });
});
