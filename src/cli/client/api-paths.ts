import type { z } from "zod";
import { AppError } from "../../errors.ts";
import { usageError } from "../usage.ts";
import type { AnswerShape } from "./answer-shape.ts";
import type { ApiResponse } from "./http.ts";

/**
 * A 2xx body checked against the contract's schema (`src/contract/`), or `bad_response` saying
 * what is off. The body is returned as received: members a newer server adds are kept, in
 * their order, for `--json` and the tables. (Answers have no transforms: what is checked is
 * what is returned.)
 */
export function parseBody<T extends z.ZodType>(schema: T, response: ApiResponse): z.output<T> {
  const result = schema.safeParse(response.body);
  if (result.success) return response.body as z.output<T>;
  const issue = result.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "the body" : issue.path.join(".");
  throw new AppError(
    "bad_response",
    `The API answered HTTP ${response.status} with an unexpected body (${where}: ${issue?.message ?? "invalid"}). Are svc and the server the same version?`,
  );
}

/**
 * A 2xx body checked against a shape (`answer-shape.ts`): as `parseBody` checks it, with the
 * contract's schema loaded only for a body the shape's guard refuses.
 */
export async function checkedBody<T>(shape: AnswerShape<T>, response: ApiResponse): Promise<T> {
  if (shape.accepts(response.body)) return response.body;
  return parseBody(await shape.schema(), response) as T;
}

/** One segment of an API path: encoded, and never empty, `.` or `..` (which would move up). */
export function pathSegment(value: string, what: string, command: string): string {
  if (value === "" || value === "." || value === "..") {
    throw usageError(command, `${JSON.stringify(value)} is not a valid ${what}.`);
  }
  return encodeURIComponent(value);
}

/** `v1/workspaces/<id>`, the root of everything a workspace holds. */
export function workspacePath(workspace: string, command: string): string {
  return `v1/workspaces/${pathSegment(workspace, "workspace id", command)}`;
}
