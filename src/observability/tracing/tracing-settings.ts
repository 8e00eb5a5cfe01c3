import { AppError } from "../../errors.ts";

/**
 * Whether and where the server exports traces, read from the standard OpenTelemetry
 * variables alone (CONTRACT "Telemetry", decision 47). This module imports no OpenTelemetry
 * package: with no endpoint set, tracing is off and none is ever loaded.
 */

/** The OTLP encodings over HTTP that svc exports; `grpc` is not one of them. */
export type TracesProtocol = "http/json" | "http/protobuf";

export interface TracingSettings {
  /** Where spans are POSTed: the traces endpoint itself (…/v1/traces). */
  readonly url: string;
  readonly protocol: TracesProtocol;
}

const protocols: readonly TracesProtocol[] = ["http/json", "http/protobuf"];

function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The traces endpoint as the specification derives it: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
 * as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` with `v1/traces` appended to its path.
 */
function tracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  const own = setting(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (own !== undefined) return own;
  const base = setting(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base === undefined) return undefined;
  return `${base.endsWith("/") ? base : `${base}/`}v1/traces`;
}

/**
 * The settings, or null when tracing is off: no endpoint, or `OTEL_SDK_DISABLED=true`,
 * or `OTEL_TRACES_EXPORTER=none`. A protocol svc does not speak, or an endpoint that is not
 * an http(s) URL, is a configuration error, refused at start-up rather than exported nowhere.
 */
export function tracingSettingsFrom(env: NodeJS.ProcessEnv): TracingSettings | null {
  if (setting(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return null;
  if (setting(env, "OTEL_TRACES_EXPORTER")?.toLowerCase() === "none") return null;
  const url = tracesUrl(env);
  if (url === undefined) return null;
  const problems: string[] = [];
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) {
    problems.push(`  the OTLP traces endpoint ${url} must be an http:// or https:// URL`);
  }
  const protocol =
    setting(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ??
    setting(env, "OTEL_EXPORTER_OTLP_PROTOCOL") ??
    "http/protobuf";
  if (!protocols.includes(protocol as TracesProtocol)) {
    problems.push(
      `  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: must be http/protobuf or http/json, not ${protocol}`,
    );
  }
  if (problems.length > 0) {
    throw new AppError(
      "invalid_config",
      `The OpenTelemetry configuration is not valid:\n${problems.join("\n")}`,
    );
  }
  return { url, protocol: protocol as TracesProtocol };
}
