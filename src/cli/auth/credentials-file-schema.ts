import { z } from "zod";
import { ROLES, SCOPES } from "../../interfaces.ts";

/**
 * What `svc auth login` saves: the token (a session's, or an API key given with
 * `--with-token`), the API it is for, and what the server said it reaches. Never a password.
 * The definition of the file: `credentials-file.ts` reads it with a guard that loads no zod
 * and falls back to this schema for a file the guard refuses (a test holds the two together).
 */
export const savedCredentialsSchema = z.object({
  api_url: z.url(),
  kind: z.enum(["session", "api_key"]),
  token: z.string().min(1),
  user: z.object({ id: z.string(), email: z.string() }).nullable(),
  workspaces: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      role: z.enum(ROLES).nullable(),
      scopes: z.array(z.enum(SCOPES)),
    }),
  ),
  expires_at: z.string().nullable(),
  saved_at: z.string(),
  /**
   * The workspace commands act on when neither `--workspace` nor SERVICE_WORKSPACE_ID names
   * one: chosen with `svc auth login --workspace` or `svc auth switch --workspace`. Absent from
   * files saved before it existed, and null when none was chosen.
   */
  default_workspace: z.string().nullable().default(null),
});
export type SavedCredentials = z.infer<typeof savedCredentialsSchema>;
