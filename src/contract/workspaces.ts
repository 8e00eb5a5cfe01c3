import { z } from "zod";
import { SCOPES } from "../interfaces.ts";
import { isoTime, pageOf, pageQuery, timeInput, workspaceParams } from "./common.ts";

/**
 * The platform API (CONTRACT.md "Platform API", decision 42): workspaces and their API keys,
 * as an operator key provisions them.
 */

/** The most an `external_id` may be: the platform's own customer id. */
export const MAX_EXTERNAL_ID_LENGTH = 255;
/** `metadata`'s bounds, Stripe's: at most 50 members, names up to 40 characters, values up to 500. */
export const METADATA_LIMITS = { members: 50, nameLength: 40, valueLength: 500 } as const;
const MAX_NAME_LENGTH = 200;

/** No control characters: these texts are shown in terminals and pages. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const printable = /^[^\u0000-\u001f\u007f-\u009f]*$/;

const workspaceName = z
  .string({ error: "name must be a string" })
  .trim()
  .min(1, { error: "name must not be empty" })
  .max(MAX_NAME_LENGTH, { error: `name must be at most ${MAX_NAME_LENGTH} characters` })
  .regex(printable, { error: "name must not contain control characters" })
  .meta({ examples: ["Acme Corp"] });

const externalId = z
  .string({ error: "external_id must be a string" })
  .min(1, { error: "external_id must not be empty" })
  .max(MAX_EXTERNAL_ID_LENGTH, {
    error: `external_id must be at most ${MAX_EXTERNAL_ID_LENGTH} characters`,
  })
  .regex(printable, { error: "external_id must not contain control characters" })
  .meta({
    description: `The platform's own id for the workspace (its customer's), unique on the server, at most ${MAX_EXTERNAL_ID_LENGTH} characters.`,
    examples: ["cus_8f2a61"],
  });

const { members, nameLength, valueLength } = METADATA_LIMITS;
const metadata = z
  .record(
    z
      .string()
      .min(1, { error: "metadata names must not be empty" })
      .max(nameLength, { error: `metadata names must be at most ${nameLength} characters` })
      .regex(printable, { error: "metadata names must not contain control characters" }),
    z
      .string({ error: "metadata values must be strings" })
      .max(valueLength, { error: `metadata values must be at most ${valueLength} characters` }),
  )
  .refine((object) => Object.keys(object).length <= members, {
    error: `metadata may have at most ${members} members`,
  })
  .meta({
    description: `A flat object of strings the platform keeps with the workspace: at most ${members} members, names up to ${nameLength} characters, values up to ${valueLength}.`,
    examples: [{ plan: "pro" }],
  });

export const createWorkspaceBody = z
  .strictObject({
    name: workspaceName,
    external_id: externalId.optional(),
    metadata: metadata.optional(),
  })
  .meta({ id: "CreateWorkspace" });

export const updateWorkspaceBody = z
  .strictObject({
    name: workspaceName.optional(),
    metadata: metadata
      .optional()
      .meta({ description: "Replaces the whole object; `{}` empties it." }),
  })
  .meta({ id: "UpdateWorkspace", description: "The members to change: name, metadata or both." });

export const listWorkspacesQuery = z.strictObject({
  ...pageQuery,
  external_id: externalId
    .optional()
    .meta({ description: "Only the workspace with this external_id (at most one)." }),
});

export const deleteWorkspaceQuery = z.strictObject({
  cascade: z
    .enum(["true", "false"], { error: "cascade must be true or false" })
    .default("false")
    .transform((text) => text === "true")
    .meta({
      description:
        "true: delete the workspace with everything in it (destinations, events, deliveries, keys, memberships, listen sessions), in one transaction. Without it, a workspace that has destinations is refused (409 workspace_not_empty).",
    }),
});

export { workspaceParams };

export const workspaceSchema = z
  .object({
    id: z.string().meta({ examples: ["ws_0b7c3d5e9f1a2b4c6d8e0f12"] }),
    name: z.string(),
    external_id: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: "Workspace" });
export type WorkspaceBody = z.infer<typeof workspaceSchema>;

export const workspacePageSchema = pageOf(workspaceSchema).meta({ id: "WorkspacePage" });

/** The scopes a workspace's key may have (an operator's are made on the host only). */
export const mintApiKeyBody = z
  .strictObject({
    scopes: z
      .array(z.enum(SCOPES, { error: `scopes must be among: ${SCOPES.join(", ")}` }))
      .min(1, { error: "scopes must name at least one scope" })
      .max(SCOPES.length * 2)
      .transform((scopes) => [...new Set(scopes)]),
    name: z
      .string()
      .trim()
      .min(1)
      .max(MAX_NAME_LENGTH)
      .regex(printable, { error: "name must not contain control characters" })
      .optional()
      .meta({ description: "What the key is for, for people.", examples: ["backend"] }),
    expires_at: timeInput.optional().meta({
      description: "When the key stops working (ISO 8601, in the future); never when absent.",
    }),
  })
  .meta({ id: "MintApiKey" });

export const apiKeyParams = z.object({
  workspace: workspaceParams.shape.workspace,
  id: z.string().meta({ description: "The key's id.", examples: ["key_ef6e4e78267cdc566fe1b90d"] }),
});

export const listApiKeysQuery = z.strictObject(pageQuery);

export const apiKeySchema = z
  .object({
    id: z.string().meta({ examples: ["key_ef6e4e78267cdc566fe1b90d"] }),
    scopes: z.array(z.enum(SCOPES)),
    name: z.string().nullable(),
    created_at: isoTime,
    expires_at: isoTime.nullable(),
    last_used_at: isoTime.nullable().meta({
      description: "Written at most once a minute, so up to a minute old; null if never used.",
    }),
  })
  .meta({ id: "ApiKey", description: "A workspace's API key; never its token or its hash." });
export type ApiKeyBody = z.infer<typeof apiKeySchema>;

export const mintedApiKeySchema = apiKeySchema
  .extend({
    token: z.string().meta({
      description: "The key itself (svc_…), shown in this answer only.",
      examples: ["svc_…"],
    }),
  })
  .meta({ id: "MintedApiKey" });

export const apiKeyPageSchema = pageOf(apiKeySchema).meta({ id: "ApiKeyPage" });
