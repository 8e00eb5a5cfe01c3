/**
 * Whole requests and answers of the main operations, as the OpenAPI document shows them
 * (issue 30). Spectral's `oas3-valid-media-example` holds each to its schema in `npm test`.
 */

const destinationId = "dst_5f0c2a9e81b34d7c6a1e0f93";
const eventId = "evt_01a1fea3869b5b1f7c0d9e2a4b36";
const time = "2026-11-25T12:00:00.000Z";

const destination = {
  id: destinationId,
  url: "https://hooks.example.com/svc",
  events: ["job.completed", "job.failed"],
  active: true,
  created_at: time,
  updated_at: time,
};

export const examples = {
  createDestination: { url: destination.url, events: destination.events },
  createdDestination: { ...destination, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
  destinationPage: { data: [destination], next_cursor: null },
  publish: { type: "job.completed", data: { object: { id: "job_42", status: "done" } } },
  eventSummary: {
    id: eventId,
    type: "job.completed",
    api_version: "2026-11-01",
    created: 1795273492,
    test: false,
  },
  retriedDelivery: {
    id: `dlv_${eventId.slice(4)}_${destinationId.slice(4)}`,
    event_id: eventId,
    destination_id: destinationId,
    event_type: "job.completed",
    status: "pending",
    attempts: 3,
    created_at: time,
    last_attempt_at: "2026-11-25T12:05:00.000Z",
    next_attempt_at: "2026-11-25T12:06:00.000Z",
    last_status_code: 500,
    last_error: "HTTP 500",
    in_flight: false,
    state: "waiting",
    failure_reason: null,
    test: false,
  },
  recover: { since: "2026-11-24T12:00:00Z" },
  recovery: { queued: 12 },
  signIn: { email: "ada@example.com", password: "correct horse battery staple" },
  createWorkspace: { name: "Acme Corp", external_id: "cus_8f2a61", metadata: { plan: "pro" } },
  workspace: {
    id: "ws_0b7c3d5e9f1a2b4c6d8e0f12",
    name: "Acme Corp",
    external_id: "cus_8f2a61",
    metadata: { plan: "pro" },
    created_at: time,
    updated_at: time,
  },
  mintApiKey: { scopes: ["events:write", "webhooks:write"], name: "backend" },
} as const;
