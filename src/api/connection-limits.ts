import type { Server } from "node:http";
import type { Socket } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * What a connection may take of the server (decision 37); each is a setting of the same name,
 * in milliseconds or connections. Node's own defaults leave a request body without a deadline
 * and connections without a cap: a client sending one byte every few seconds holds a socket,
 * its buffers and a file descriptor for as long as it likes.
 */
export interface ConnectionLimits {
  /** The whole request, headers and body, from its first byte (`requestTimeout`). */
  readonly requestTimeout: number;
  /** The request's headers, from its first byte (`headersTimeout`). */
  readonly headersTimeout: number;
  /** A connection between two requests (`keepAliveTimeout`). */
  readonly keepAliveTimeout: number;
  /** A connection on which no byte moves either way, during a request or its answer (`idleTimeout`). */
  readonly idleTimeout: number;
  /** Connections open at once, in all (`connectionLimit`). */
  readonly connectionLimit: number;
  /** Connections open at once from one IPv4 address or IPv6 /64; 0: none (`connectionLimitPerIp`). */
  readonly connectionLimitPerIp: number;
}

/**
 * How often Node looks for requests past their deadlines: a tenth of the shorter deadline, at
 * most a second. Node's own 30 s would let a 10 s deadline run to 40 s; the look walks only the
 * connections with a request in progress, so once a second costs nothing worth counting.
 */
function checkingIntervalOf(limits: ConnectionLimits): number {
  const shorter = Math.min(limits.headersTimeout, limits.requestTimeout);
  return Math.max(1, Math.min(1000, Math.floor(shorter / 10)));
}

/** The Fastify options that set the time limits of its HTTP server (given when it is made). */
export function serverTimeouts(limits: ConnectionLimits) {
  return {
    requestTimeout: limits.requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeout,
    // Fastify's name for the socket's idle timeout (`server.setTimeout`).
    connectionTimeout: limits.idleTimeout,
    http: {
      requestTimeout: limits.requestTimeout,
      headersTimeout: limits.headersTimeout,
      keepAliveTimeout: limits.keepAliveTimeout,
      connectionsCheckingInterval: checkingIntervalOf(limits),
    },
  };
}

/**
 * What counts as one address: an IPv4 address (an IPv4-mapped IPv6 one too), or the /64 of an
 * IPv6 address, since one client commonly holds a whole /64.
 */
export function addressKey(remoteAddress: string): string {
  if (!ipaddr.isValid(remoteAddress)) return remoteAddress;
  const address = ipaddr.process(remoteAddress);
  if (address.kind() === "ipv4") return address.toString();
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${prefix.map((part) => part.toString(16)).join(":")}::/64`;
}

/**
 * Caps the connections of `server`: `connectionLimit` in all (Node closes one more as it is
 * accepted), `connectionLimitPerIp` from one address (closed here, as it is accepted).
 * A connection over a cap is closed at once, without an answer: an answer written before the
 * request is read races the request's bytes (the client often sees a reset, not the answer),
 * and reading the request is what the cap is there to spare. Node's own cap does the same.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  server.maxConnections = limits.connectionLimit;
  const perAddress = limits.connectionLimitPerIp;
  if (perAddress === 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const remote = socket.remoteAddress;
    if (remote === undefined) {
      // Gone before it was seen.
      socket.destroy();
      return;
    }
    const key = addressKey(remote);
    const count = open.get(key) ?? 0;
    if (count >= perAddress) {
      socket.destroy();
      return;
    }
    open.set(key, count + 1);
    socket.once("close", () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
