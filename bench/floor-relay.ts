/**
 * The least a webhook service can do, as a process of its own (bench/floor.ts): answer each
 * publish 202 and POST its signed notification to the receiver. No database, no framework,
 * no authentication, no validation, no log, one thread. Run as
 * `node floor-relay.js <receiver URL>`; prints the port it listens on once it does.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { signatureHeader } from "../src/receiver/signature.ts";

const target = process.argv[2] ?? "";
// As the service's sender: 16 keep-alive connections to the origin.
const agent = new Agent({ connections: 16, keepAliveTimeout: 30_000 });
const secret = "whsec_Zmxvb3ItcmVsYXktYmVuY2htYXJrLXNlY3JldC0zMmJ5dGVz";

const server = createServer((incoming, response) => {
  const chunks: Buffer[] = [];
  incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
  incoming.on("end", () => {
    const input = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: unknown };
    const created = Math.floor(Date.now() / 1000);
    const head = {
      id: `evt_${randomBytes(12).toString("hex")}`,
      type: input.type,
      api_version: "2026-11-01",
      created,
    };
    const body = JSON.stringify({ ...head, data: input.data });
    response.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify(head));
    request(target, {
      dispatcher: agent,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": head.id,
        "webhook-signature": signatureHeader(secret, created, body),
      },
      body,
    })
      .then((answer) => answer.body.dump())
      .catch((error: unknown) => {
        process.stderr.write(`floor relay: ${String(error)}\n`);
      });
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
