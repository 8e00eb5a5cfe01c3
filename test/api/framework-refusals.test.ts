import assert from "node:assert/strict";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { frameworkRefusals } from "../../src/api/error-handler.ts";
import { assertEnvelope, type Answer } from "../support/envelope.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";

/** Sends `request` as bytes on a new connection and reads the answer until the server closes. */
function rawExchange(port: number, request: string): Promise<Answer & { head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      resolve({ statusCode: Number(head.split(" ")[1]), body, head });
    });
  });
}

describe("every refusal is the contract's envelope (decision 28)", () => {
  let api: InProcessApi;
  before(async () => {
    api = await inProcessApi();
  });
  after(async () => {
    await api.dispose();
  });

  it("a malformed percent-encoding in the path is 400 invalid_path", async () => {
    assertEnvelope(await api.call("GET", "/webhooks/%ff"), "invalid_path");
  });

  it("a path segment over 100 characters is 414 uri_too_long", async () => {
    assertEnvelope(await api.call("GET", `/webhooks/${"a".repeat(101)}`), "uri_too_long");
  });

  it("a known path with another method is 405 method_not_allowed, with Allow", async () => {
    const response = await api.call("PUT", "/webhooks/dst_1", { body: {} });
    assertEnvelope(response, "method_not_allowed");
    assert.equal(response.headers.allow, "DELETE, GET, HEAD, PATCH");
    const collection = await api.call("DELETE", "/webhooks");
    assertEnvelope(collection, "method_not_allowed");
    assert.equal(collection.headers.allow, "GET, HEAD, POST");
  });

  it("an unknown path is 404 route_not_found", async () => {
    assertEnvelope(await api.call("GET", "/nothing-here"), "route_not_found");
    assertEnvelope(await api.call("GET", "/v2/anything"), "route_not_found");
  });

  it("a body that is not JSON, or not sent as JSON, is 400 invalid_json or 415", async () => {
    assertEnvelope(await api.call("POST", "/webhooks", { body: "{nope" }), "invalid_json");
    assertEnvelope(
      await api.call("POST", "/webhooks", {
        body: "url=x",
        headers: { "content-type": "text/plain" },
      }),
      "unsupported_media_type",
    );
  });

  describe("over a real socket", () => {
    let port: number;
    before(async () => {
      await api.app.listen({ port: 0, host: "127.0.0.1" });
      port = (api.app.server.address() as AddressInfo).port;
    });

    it("headers over 16 KiB are 431 headers_too_large", async () => {
      const answer = await rawExchange(
        port,
        `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      );
      assertEnvelope(answer, "headers_too_large");
      assert.match(answer.head, /content-type: application\/json/i);
    });

    it("a URL over 16 KiB is 431 headers_too_large too", async () => {
      const answer = await rawExchange(
        port,
        `GET /v1/${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      assertEnvelope(answer, "headers_too_large");
    });

    it("a request that is not HTTP is 400 malformed_request", async () => {
      assertEnvelope(await rawExchange(port, "HELLO THERE\r\n\r\n"), "malformed_request");
      assertEnvelope(
        await rawExchange(port, "BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
        "malformed_request",
      );
    });

    it("a Content-Length that the body does not match is refused in the envelope", async () => {
      const answer = await rawExchange(
        port,
        "POST /v1/workspaces/x/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}",
      );
      assertEnvelope(answer, "malformed_request");
    });
  });

  it("a request not received in time is 408 request_timeout", async () => {
    // Node reports the timeout to the handler; a socket pair stands in for the connection.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
    const chunks: Buffer[] = [];
    client.on("data", (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise((resolve) => client.on("close", resolve));
    frameworkRefusals.clientErrorHandler(
      Object.assign(new Error("timed out"), { code: "ERR_HTTP_REQUEST_TIMEOUT" }),
      await accepted,
    );
    await closed;
    server.close();
    const [head = "", body = ""] = Buffer.concat(chunks).toString("utf8").split("\r\n\r\n", 2);
    assertEnvelope({ statusCode: Number(head.split(" ")[1]), body }, "request_timeout");
  });
});
