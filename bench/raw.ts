import { Agent, request } from "undici";
import { signatureHeader } from "../src/receiver/signature.ts";
import { pooled } from "./stats.ts";

/**
 * The physical limit on this machine: sign and POST notifications to the receiver as fast as
 * undici can over keep-alive connections (`concurrency` of them), with no persistence.
 * Returns notifications per second.
 */
export async function measureRawLimit(options: {
  url: string;
  caCertPem: string;
  count: number;
  concurrency: number;
  /** Sent first and not counted, as the service's measurements warm up (bench/run.ts). */
  warmUp: number;
}): Promise<number> {
  const agent = new Agent({
    connections: options.concurrency,
    keepAliveTimeout: 30_000,
    connect: { ca: options.caCertPem },
  });
  const secret = "whsec_cmF3LWxpbWl0LWJlbmNobWFyay1zZWNyZXQtMzJieXRlcw";
  const target = `${options.url}/raw`;
  const send = async (index: number): Promise<void> => {
    const body = JSON.stringify({
      id: `evt_raw_${index}`,
      type: "job.completed",
      api_version: "2026-11-01",
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: `job_${index}` } },
    });
    const response = await request(target, {
      dispatcher: agent,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": `evt_raw_${index}`,
        "webhook-signature": signatureHeader(secret, Math.floor(Date.now() / 1000), body),
      },
      body,
    });
    await response.body.dump();
  };
  await pooled(options.warmUp, options.concurrency, send);
  const started = performance.now();
  await pooled(options.count, options.concurrency, (index) => send(index + 1_000_000));
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return options.count / seconds;
}
