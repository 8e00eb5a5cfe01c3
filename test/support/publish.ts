import { randomUUID } from "node:crypto";

/**
 * Publishes `count` events through the API, `parallel` requests at a time, and returns their
 * notification ids in order. Each event has an Idempotency-Key of its own and is sent again
 * with it after a 503, a 409 idempotency_in_progress (after its Retry-After) or a broken
 * connection, so an event whose answer was lost is still published exactly once: what a
 * well-behaved client (such as `svc`) does during a database outage.
 */
export async function publishMany(options: {
  readonly baseUrl: string;
  readonly key: string;
  readonly workspaceId: string;
  readonly count: number;
  readonly parallel?: number;
}): Promise<string[]> {
  const { baseUrl, key, workspaceId, count } = options;
  const url = new URL(`/v1/workspaces/${workspaceId}/events`, baseUrl);
  const ids: string[] = new Array<string>(count);
  const publishOne = async (index: number): Promise<void> => {
    const idempotencyKey = randomUUID();
    const body = JSON.stringify({ type: "job.completed", data: { object: { n: index } } });
    for (let attempt = 1; ; attempt += 1) {
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "idempotency-key": idempotencyKey,
          },
          body,
        });
        const text = await response.text();
        if (response.status === 202) {
          ids[index] = (JSON.parse(text) as { id: string }).id;
          return;
        }
        const retryable =
          response.status === 503 ||
          (response.status === 409 && text.includes('"idempotency_in_progress"'));
        if (!retryable || attempt >= 100) {
          throw new Error(`publishing event ${index} answered ${response.status}: ${text}`);
        }
        const retryAfter = Number(response.headers.get("retry-after") ?? "0");
        await new Promise((resolve) => setTimeout(resolve, Math.max(retryAfter * 1000, 100)));
      } catch (error) {
        if (!(error instanceof TypeError) || attempt >= 100) throw error; // fetch: network error
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await publishOne(next++);
  };
  await Promise.all(Array.from({ length: options.parallel ?? 16 }, lane));
  return ids;
}

/** The distinct `Webhook-Id`s among requests a receiver got. */
export function distinctWebhookIds(
  requests: readonly { headers: Record<string, unknown> }[],
): Set<string> {
  return new Set(requests.map((request) => String(request.headers["webhook-id"])));
}
