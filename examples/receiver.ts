/**
 * A minimal receiver of svc-webhooks notifications, on node:http / node:https alone: it reads
 * the raw body, verifies the Webhook-Signature, skips repeats by Webhook-Id, answers 2xx at
 * once and works afterwards; a notification that fails verification gets 400.
 *
 *   npm run build
 *   node dist/examples/receiver.js whsec.txt            # or WEBHOOK_SECRET_FILE=whsec.txt
 *
 * Environment: PORT (default 8080; 0 picks a free port); TLS_CERT_FILE and TLS_KEY_FILE (PEM)
 * to serve HTTPS, since the service delivers only to https:// URLs. It listens on loopback
 * (127.0.0.1) only: an example is not a server for the network; put a real receiver behind
 * your TLS proxy.
 */
import { readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { verifySignature, WebhookVerificationError } from "../src/index.ts";

const MAX_BODY_BYTES = 1024 * 1024;

// Delivery is at least once: a notification can arrive again, with the same Webhook-Id. This
// in-memory set forgets on restart and is not shared between instances; a production receiver
// persists the ids it has handled (e.g. a unique column written with the work's own results).
const handledIds = new Set<string>();

interface Reply {
  readonly status: number;
  readonly text: string;
}

async function receive(request: IncomingMessage, secret: string): Promise<Reply> {
  if (request.method !== "POST") return { status: 405, text: "method_not_allowed" };
  const body = await readRawBody(request);
  if (body === null) return { status: 413, text: "body_too_large" };
  try {
    // The raw bytes, never JSON.parse then JSON.stringify: any re-serialisation breaks the HMAC.
    verifySignature(secret, headerValue(request, "webhook-signature"), body);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.warn(`refused a notification: ${error.code}: ${error.message}`);
    return { status: 400, text: error.code };
  }
  const id = headerValue(request, "webhook-id");
  if (id === undefined) return { status: 400, text: "webhook_id_missing" };
  if (handledIds.has(id)) return { status: 200, text: "duplicate" };
  handledIds.add(id);
  // Answer first, work afterwards (setImmediate runs after the reply is written): a slow
  // answer counts as a failed delivery and is retried.
  setImmediate(() => {
    handleNotification(id, body);
  });
  return { status: 200, text: "ok" };
}

function handleNotification(id: string, body: Buffer): void {
  // Parsed only now that the signature is known to be good.
  const event = JSON.parse(body.toString("utf8")) as { type: string };
  console.log(`notification ${id}: ${event.type}`);
}

/** The whole body, or null past MAX_BODY_BYTES (read to the end anyway, so 413 can be sent). */
async function readRawBody(request: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  return size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : null;
}

/** Node joins repeated custom headers with ", ", so its array type only covers Set-Cookie. */
function headerValue(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

function answer(response: ServerResponse, { status, text }: Reply): void {
  response.writeHead(status, { "content-type": "text/plain" }).end(`${text}\n`);
}

function main(): void {
  const secretFile = process.argv[2] ?? process.env.WEBHOOK_SECRET_FILE;
  if (secretFile === undefined) {
    console.error("usage: node dist/examples/receiver.js <secret-file> (or WEBHOOK_SECRET_FILE)");
    process.exitCode = 2;
    return;
  }
  // The file holds the whole whsec_… secret alone; trim only a newline an editor may have added.
  const secret = readFileSync(secretFile, "utf8").trim();
  const listener: RequestListener = (request, response) => {
    receive(request, secret).then(
      (reply) => {
        answer(response, reply);
      },
      (error: unknown) => {
        console.error(error);
        answer(response, { status: 500, text: "internal_error" });
      },
    );
  };
  const { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } = process.env;
  const tls = certFile !== undefined && keyFile !== undefined;
  const server = tls
    ? createHttpsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, listener)
    : createHttpServer(listener);
  server.listen(Number(process.env.PORT ?? 8080), "127.0.0.1", () => {
    const address = server.address();
    const where =
      typeof address === "object" && address !== null
        ? `${address.address}:${address.port}`
        : "127.0.0.1:?";
    console.log(`listening on ${tls ? "https" : "http"}://${where}`);
  });
}

main();
