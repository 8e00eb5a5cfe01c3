import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An OpenTelemetry collector as far as svc's exporter can tell: a plain HTTP server on
 * loopback that takes OTLP/HTTP trace exports (`POST /v1/traces`), in JSON or in protobuf,
 * answers 200 and keeps every span, decoded from first principles as a collector would.
 */

/** One exported span, its ids in lower-case hex as the W3C `traceparent` writes them. */
export interface CollectedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  /** The exporting process's `service.name`. */
  readonly serviceName: string;
}

export interface OtlpCollector {
  /** The base URL to give as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string;
  readonly spans: CollectedSpan[];
  /** The `content-type` of every export received. */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      const type = request.headers["content-type"] ?? "";
      contentTypes.push(type);
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      spans.push(...(type.includes("protobuf") ? fromProtobuf(body) : fromJson(body)));
      response.writeHead(200, { "content-type": type }).end(type.includes("json") ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

type Scalar = string | number | boolean;

// --- http/json: the OTLP JSON mapping (ids as hex, enums as numbers). ---

interface JsonKeyValue {
  key: string;
  value: {
    stringValue?: string;
    intValue?: string | number;
    boolValue?: boolean;
    doubleValue?: number;
  };
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}

interface JsonExport {
  resourceSpans: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans: { spans: JsonSpan[] }[];
  }[];
}

function jsonAttributes(list: readonly JsonKeyValue[] = []): Record<string, Scalar> {
  const attributes: Record<string, Scalar> = {};
  for (const { key, value } of list) {
    const scalar =
      value.stringValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue)) ??
      value.boolValue ??
      value.doubleValue;
    if (scalar !== undefined) attributes[key] = scalar;
  }
  return attributes;
}

function fromJson(body: Buffer): CollectedSpan[] {
  const exported = JSON.parse(body.toString("utf8")) as JsonExport;
  return exported.resourceSpans.flatMap((resourceSpans) => {
    const serviceName = String(
      jsonAttributes(resourceSpans.resource?.attributes)["service.name"] ?? "",
    );
    return resourceSpans.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? "",
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
        links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
        statusCode: span.status?.code ?? 0,
        serviceName,
      })),
    );
  });
}

// --- http/protobuf: the wire format, read field by field (opentelemetry-proto's numbers). ---

/** A message's fields: number → values (a varint as bigint, a length-delimited as bytes). */
type Fields = Map<number, (bigint | Buffer)[]>;

function readVarint(bytes: Buffer, at: { offset: number }): bigint {
  let value = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const byte = bytes[at.offset++]!;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return value;
  }
}

function fieldsOf(bytes: Buffer): Fields {
  const fields: Fields = new Map();
  const at = { offset: 0 };
  while (at.offset < bytes.length) {
    const tag = Number(readVarint(bytes, at));
    const [number, wireType] = [tag >>> 3, tag & 7];
    let value: bigint | Buffer;
    if (wireType === 0) value = readVarint(bytes, at);
    else if (wireType === 1 || wireType === 5) {
      const size = wireType === 1 ? 8 : 4;
      value = bytes.subarray(at.offset, at.offset + size);
      at.offset += size;
    } else if (wireType === 2) {
      const length = Number(readVarint(bytes, at));
      value = bytes.subarray(at.offset, at.offset + length);
      at.offset += length;
    } else throw new Error(`unexpected protobuf wire type ${wireType}`);
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

const messages = (fields: Fields, number: number): Fields[] =>
  (fields.get(number) ?? []).map((value) => fieldsOf(value as Buffer));
const bytesOf = (fields: Fields, number: number): Buffer =>
  (fields.get(number)?.[0] as Buffer | undefined) ?? Buffer.alloc(0);
const varintOf = (fields: Fields, number: number): bigint =>
  (fields.get(number)?.[0] as bigint | undefined) ?? 0n;

/** KeyValue { 1 key, 2 AnyValue { 1 string, 2 bool, 3 int, 4 double } }. */
function protobufAttributes(list: readonly Fields[]): Record<string, Scalar> {
  const attributes: Record<string, Scalar> = {};
  for (const keyValue of list) {
    const key = bytesOf(keyValue, 1).toString("utf8");
    const [value] = messages(keyValue, 2);
    if (value === undefined) continue;
    if (value.has(1)) attributes[key] = bytesOf(value, 1).toString("utf8");
    else if (value.has(2)) attributes[key] = varintOf(value, 2) !== 0n;
    else if (value.has(3)) attributes[key] = Number(BigInt.asIntN(64, varintOf(value, 3)));
    else if (value.has(4)) attributes[key] = bytesOf(value, 4).readDoubleLE(0);
  }
  return attributes;
}

/**
 * ExportTraceServiceRequest { 1 ResourceSpans { 1 Resource { 1 attributes }, 2 ScopeSpans
 * { 2 Span { 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes,
 * 13 Link { 1 trace_id, 2 span_id }, 15 Status { 3 code } } } } }.
 */
function fromProtobuf(body: Buffer): CollectedSpan[] {
  return messages(fieldsOf(body), 1).flatMap((resourceSpans) => {
    const [resource] = messages(resourceSpans, 1);
    const serviceName = String(
      protobufAttributes(resource === undefined ? [] : messages(resource, 1))["service.name"] ?? "",
    );
    return messages(resourceSpans, 2).flatMap((scope) =>
      messages(scope, 2).map((span) => {
        const [status] = messages(span, 15);
        return {
          traceId: bytesOf(span, 1).toString("hex"),
          spanId: bytesOf(span, 2).toString("hex"),
          parentSpanId: bytesOf(span, 4).toString("hex"),
          name: bytesOf(span, 5).toString("utf8"),
          kind: Number(varintOf(span, 6)),
          attributes: protobufAttributes(messages(span, 9)),
          links: messages(span, 13).map((link) => ({
            traceId: bytesOf(link, 1).toString("hex"),
            spanId: bytesOf(link, 2).toString("hex"),
          })),
          statusCode: status === undefined ? 0 : Number(varintOf(status, 3)),
          serviceName,
        };
      }),
    );
  });
}
