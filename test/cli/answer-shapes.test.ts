import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { z } from "zod";
import { savedCredentialsSchema } from "../../src/cli/auth/credentials-file-schema.ts";
import { savedCredentialsOf } from "../../src/cli/auth/credentials-file.ts";
import type { AnswerShape } from "../../src/cli/client/answer-shape.ts";
import { whoAmIShape } from "../../src/cli/client/auth-api.ts";
import { pageShape } from "../../src/cli/client/pages.ts";
import {
  DELIVERY_DETAIL_FIELDS,
  DELIVERY_FIELDS,
  deliveryDetailShape,
  deliveryShape,
  recoveryShape,
} from "../../src/cli/deliveries/delivery.ts";
import {
  EVENT_DETAIL_FIELDS,
  EVENT_FIELDS,
  eventDetailShape,
  eventSummaryShape,
} from "../../src/cli/events/event.ts";
import {
  DESTINATION_FIELDS,
  createdDestinationShape,
  deletionShape,
  destinationShape,
  destinationWithDeliveryShape,
} from "../../src/cli/webhooks/destination.ts";
import { membersOf } from "../../src/contract/common.ts";
import {
  createdDestinationSchema,
  deletionSchema,
  destinationPageSchema,
  destinationSchema,
  destinationWithDeliverySchema,
} from "../../src/contract/destinations.ts";
import { whoAmISchema } from "../../src/contract/auth.ts";
import {
  deliveryDetailSchema,
  deliveryPageSchema,
  deliverySchema,
  eventDetailSchema,
  eventPageSchema,
  eventSummarySchema,
  recoverySchema,
} from "../../src/contract/delivery-log.ts";

/**
 * The CLI checks answers and its credentials file with guards that load no zod (issue 33);
 * the contract's zod schemas stay their definition. These tests hold each guard to its schema:
 * on valid samples, and on every variant of them with one member missing, one value of
 * another type, or one member added, the guard accepts exactly what the schema accepts.
 */

/** Values of every JSON type, and numbers zod's `int` refuses. */
const OTHER_VALUES: readonly unknown[] = [
  null,
  0,
  -1,
  1.5,
  2 ** 60,
  "",
  "x",
  "open",
  "pending",
  "owner",
  "webhooks:read",
  "https://example.com/",
  true,
  false,
  [],
  ["x"],
  {},
];

type Path = readonly (string | number)[];

/** The places in `value`, its own root excepted: every member and element, at any depth. */
function placesIn(value: unknown, path: Path = []): Path[] {
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => [[...path, index], ...placesIn(item, [...path, index])]);
  }
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([name, member]) => [
      [...path, name],
      ...placesIn(member, [...path, name]),
    ]);
  }
  return [];
}

/** A copy of `root` with `change` applied to the container of the place `path` names. */
function changed(
  root: unknown,
  path: Path,
  change: (container: Record<string | number, unknown>, key: string | number) => void,
): unknown {
  const copy = structuredClone(root);
  let container = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) container = container[key] as typeof container;
  change(container, path.at(-1) as string | number);
  return copy;
}

/** Each sample, and each sample with one member removed, one value replaced, one added. */
function variantsOf(samples: readonly unknown[]): { label: string; value: unknown }[] {
  return samples.flatMap((sample, index) => {
    const places = placesIn(sample);
    const containers: Path[] = [[], ...places].filter((path) => {
      const at = path.reduce<unknown>((value, key) => (value as never)[key], sample);
      return typeof at === "object" && at !== null && !Array.isArray(at);
    });
    return [
      { label: `sample ${index}`, value: sample },
      ...places.flatMap((path) => [
        ...(typeof path.at(-1) === "string"
          ? [
              {
                label: `sample ${index} without ${path.join(".")}`,
                value: changed(sample, path, (container, key) => {
                  Reflect.deleteProperty(container, key);
                }),
              },
            ]
          : []),
        ...OTHER_VALUES.map((other) => ({
          label: `sample ${index} with ${path.join(".")} = ${JSON.stringify(other)}`,
          value: changed(sample, path, (container, key) => {
            container[key] = other;
          }),
        })),
      ]),
      ...containers.map((path) => ({
        label: `sample ${index} with a member added at ${path.join(".") || "the top"}`,
        value:
          path.length === 0
            ? { ...(sample as object), added_later: 1 }
            : changed(sample, path, (container, key) => {
                (container[key] as Record<string, unknown>).added_later = 1;
              }),
      })),
      ...OTHER_VALUES.map((other) => ({
        label: `${JSON.stringify(other)} instead of sample ${index}`,
        value: other,
      })),
    ];
  });
}

function assertGuardMatchesSchema(
  shape: AnswerShape<unknown>,
  schema: z.ZodType,
  samples: readonly unknown[],
): void {
  for (const sample of samples) {
    assert.ok(schema.safeParse(sample).success, `the sample is valid: ${JSON.stringify(sample)}`);
  }
  const disagreements = variantsOf(samples)
    .filter(({ value }) => shape.accepts(value) !== schema.safeParse(value).success)
    .map(({ label, value }) => `${label}: zod ${String(schema.safeParse(value).success)}`);
  assert.deepEqual(disagreements, []);
}

const destination = {
  id: "dst_5f0c2a9e81b34d7c6a1e0f93",
  url: "https://example.com/hooks",
  events: ["job.completed", "job.failed"],
  active: true,
  created_at: "2026-11-25T10:00:00.000Z",
  updated_at: "2026-11-25T11:00:00.000Z",
};

describe("the CLI's answer guards accept exactly what the contract's schemas accept", () => {
  it("a destination", async () => {
    assertGuardMatchesSchema(destinationShape, destinationSchema, [
      destination,
      { ...destination, events: [], active: false },
    ]);
    assert.equal(await destinationShape.schema(), destinationSchema);
  });

  it("a destination's members, in the contract's order, are what --fields takes", () => {
    assert.deepEqual(DESTINATION_FIELDS, membersOf(destinationSchema));
  });

  it("a page of destinations", async () => {
    const page = pageShape(destinationShape);
    assertGuardMatchesSchema(page, destinationPageSchema, [
      { data: [destination, { ...destination, id: "dst_2" }], next_cursor: "c_1" },
      { data: [], next_cursor: null },
    ]);
    const loaded = await page.schema();
    assert.deepEqual(membersOf(loaded as never), membersOf(destinationPageSchema));
  });

  it("a destination as created, with its secret", async () => {
    assertGuardMatchesSchema(createdDestinationShape, createdDestinationSchema, [
      { ...destination, secret: "whsec_abc" },
    ]);
    assert.equal(await createdDestinationShape.schema(), createdDestinationSchema);
  });

  it("a destination with its latest delivery and its circuit", async () => {
    const lastDelivery = {
      status: "failed",
      attempts: 3,
      last_attempt_at: "2026-11-25T10:00:00.000Z",
      event: "job.completed",
      notification_id: "evt_1",
      next_attempt_at: "2026-11-25T10:05:00.000Z",
      last_status_code: 503,
      last_error: "the receiver answered 503",
      circuit: { state: "open", open_until: "2026-11-25T10:10:00.000Z", opens: 2, error: "503" },
    };
    assertGuardMatchesSchema(destinationWithDeliveryShape, destinationWithDeliverySchema, [
      {
        ...destination,
        last_delivery: lastDelivery,
        circuit: {
          state: "half_open",
          open_until: "2026-11-25T10:10:00.000Z",
          opens: 1,
          reason: "3 attempts in a row failed",
        },
      },
      {
        ...destination,
        last_delivery: {
          ...lastDelivery,
          status: "pending",
          last_attempt_at: null,
          next_attempt_at: null,
          last_status_code: null,
          last_error: null,
          circuit: { state: "half_open", open_until: "x", opens: 0, error: null },
        },
        circuit: { state: "closed", open_until: null, opens: 0, reason: null },
      },
      {
        ...destination,
        last_delivery: null,
        circuit: { state: "open", open_until: null, opens: 0, reason: null },
      },
    ]);
    assert.equal(await destinationWithDeliveryShape.schema(), destinationWithDeliverySchema);
  });

  it("a deletion", async () => {
    assertGuardMatchesSchema(deletionShape, deletionSchema, [{ id: "dst_1", deleted: true }]);
    assert.equal(await deletionShape.schema(), deletionSchema);
  });
});

const delivery = {
  id: "dlv_1_dst_1",
  event_id: "evt_1",
  destination_id: "dst_1",
  event_type: "job.completed",
  status: "failed",
  attempts: 3,
  created_at: "2026-11-25T10:00:00.000Z",
  last_attempt_at: "2026-11-25T10:01:00.000Z",
  next_attempt_at: "2026-11-25T10:05:00.000Z",
  last_status_code: 503,
  last_error: "the receiver answered 503",
  in_flight: false,
  state: "failed",
  failure_reason: "retries_exhausted",
  test: false,
};

const pendingDelivery = {
  ...delivery,
  status: "pending",
  attempts: 0,
  last_attempt_at: null,
  next_attempt_at: null,
  last_status_code: null,
  last_error: null,
  in_flight: true,
  state: "in_flight",
  failure_reason: null,
  test: true,
};

const eventSummary = {
  id: "evt_1",
  type: "job.completed",
  api_version: "2026-11-01",
  created: 1795273492,
  test: false,
};

describe("the CLI's delivery-log guards accept exactly what the contract's schemas accept", () => {
  it("a delivery, and a page of them", async () => {
    assertGuardMatchesSchema(deliveryShape, deliverySchema, [delivery, pendingDelivery]);
    assertGuardMatchesSchema(pageShape(deliveryShape), deliveryPageSchema, [
      { data: [delivery, pendingDelivery], next_cursor: "c_1" },
    ]);
    assert.deepEqual(DELIVERY_FIELDS, membersOf(deliverySchema));
    assert.equal(await deliveryShape.schema(), deliverySchema);
  });

  it("a delivery with its attempts", async () => {
    const attempt = {
      attempt: 1,
      attempted_at: "2026-11-25T10:01:00.000Z",
      duration_ms: 120,
      status_code: 503,
      error: "the receiver answered 503",
      response_body: "busy",
      request_headers: { "Content-Type": "application/json", "Webhook-Id": "evt_1" },
    };
    const kept = {
      ...attempt,
      status_code: null,
      error: null,
      response_body: null,
      request_headers: null,
    };
    assertGuardMatchesSchema(deliveryDetailShape, deliveryDetailSchema, [
      { ...delivery, attempts: [attempt, kept], attempt_count: 3 },
      { ...pendingDelivery, attempts: [], attempt_count: 0 },
    ]);
    assert.deepEqual(DELIVERY_DETAIL_FIELDS, membersOf(deliveryDetailSchema));
    assert.equal(await deliveryDetailShape.schema(), deliveryDetailSchema);
  });

  it("a recovery", async () => {
    assertGuardMatchesSchema(recoveryShape, recoverySchema, [{ queued: 4 }]);
    assert.equal(await recoveryShape.schema(), recoverySchema);
  });

  it("an event's summary, and a page of them", async () => {
    assertGuardMatchesSchema(eventSummaryShape, eventSummarySchema, [eventSummary]);
    assertGuardMatchesSchema(pageShape(eventSummaryShape), eventPageSchema, [
      { data: [eventSummary, { ...eventSummary, test: true }], next_cursor: null },
    ]);
    assert.deepEqual(EVENT_FIELDS, membersOf(eventSummarySchema));
    assert.equal(await eventSummaryShape.schema(), eventSummarySchema);
  });

  it("an event with its data and its deliveries", async () => {
    assertGuardMatchesSchema(eventDetailShape, eventDetailSchema, [
      {
        ...eventSummary,
        data: { object: { id: "job_42", status: "done", nested: { list: [1, null] } } },
        deliveries: [delivery, pendingDelivery],
      },
      { ...eventSummary, data: { object: {} }, deliveries: [] },
    ]);
    assert.deepEqual(EVENT_DETAIL_FIELDS, membersOf(eventDetailSchema));
    assert.equal(await eventDetailShape.schema(), eventDetailSchema);
  });
});

describe("the CLI's who-am-I guard accepts exactly what the contract's schema accepts", () => {
  it("a session, an API key and a portal session", async () => {
    const workspaces = [
      { id: "ws_1", name: "One", role: "owner", scopes: ["webhooks:read", "events:write"] },
      { id: "ws_2", name: "Two", role: null, scopes: [] },
    ];
    const expires_at = "2026-12-25T10:00:00.000Z";
    assertGuardMatchesSchema(whoAmIShape, whoAmISchema, [
      {
        kind: "session",
        user: { id: "usr_1", email: "ada@example.com" },
        expires_at,
        workspaces,
        csrf_token: "csrf_1",
      },
      { kind: "session", user: { id: "usr_1", email: "a@b" }, expires_at, workspaces: [] },
      { kind: "api_key", key_id: "key_1", user: null, workspaces },
      { kind: "portal", user: null, expires_at, workspaces: workspaces.slice(0, 1) },
    ]);
    assert.equal(await whoAmIShape.schema(), whoAmISchema);
  });
});

describe("the credentials file is read as its schema reads it, without zod", () => {
  const saved = {
    api_url: "https://api.example.com/",
    kind: "session",
    token: "svs_abc",
    user: { id: "usr_1", email: "ada@example.com" },
    workspaces: [
      { id: "ws_1", name: "One", role: "owner", scopes: ["webhooks:read", "events:write"] },
      { id: "ws_2", name: "Two", role: null, scopes: [] },
    ],
    expires_at: "2026-12-25T10:00:00.000Z",
    saved_at: "2026-11-25T10:00:00.000Z",
    default_workspace: "ws_2",
  };
  const samples = [
    saved,
    { ...saved, kind: "api_key", user: null, expires_at: null, default_workspace: null },
    { ...saved, api_url: " \thttp://127.0.0.1:8787/v\n1 ", workspaces: [] },
  ];

  it("accepts and refuses what the schema does, and gives what it gives", () => {
    const withoutDefault = Object.fromEntries(
      Object.entries(saved).filter(([name]) => name !== "default_workspace"),
    );
    const variants = variantsOf([...samples, withoutDefault]);
    variants.push(
      ...["not a url", "", "  ", "https://", "//example.com", "http://[::1"].map((api_url) => ({
        label: `api_url ${JSON.stringify(api_url)}`,
        value: { ...saved, api_url },
      })),
    );
    const disagreements = variants
      .map(({ label, value }) => {
        const parsed = savedCredentialsSchema.safeParse(value);
        // JSON text, so that the members' order counts too (the file is written back as read).
        const expected = parsed.success ? JSON.stringify(parsed.data) : null;
        const actual = savedCredentialsOf(value);
        return { label, expected, actual: actual === null ? null : JSON.stringify(actual) };
      })
      .filter(({ expected, actual }) => expected !== actual);
    assert.deepEqual(disagreements, []);
    assert.ok(variants.length > 1000, "every member is varied");
  });
});
