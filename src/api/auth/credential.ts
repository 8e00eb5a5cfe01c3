import { hashToken } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import {
  ROLE_SCOPES,
  SCOPES,
  type ApiKey,
  type PortalSession,
  type Role,
  type Scope,
  type Session,
  type Store,
} from "../../interfaces.ts";

/**
 * Who is calling: an API key (`svc_…`; an operator key, `svc_op_…`, is one whose
 * `workspaceId` is null), a signed-in user's session (`svs_…`), or a customer portal's
 * session (`svp_…`, decision 43), which reaches its one workspace and nothing else.
 */
export type Credential =
  | { readonly kind: "api_key"; readonly apiKey: ApiKey }
  | { readonly kind: "session"; readonly session: Session }
  | { readonly kind: "portal"; readonly portal: PortalSession };

/** The stores a credential is looked up in. */
type CredentialStores = Pick<Store, "credentials" | "portal">;

/** A workspace a credential reaches, with what it may do there. */
export interface WorkspaceAccess {
  readonly id: string;
  readonly name: string;
  /** A user's role; null for an API key, which has scopes but no role. */
  readonly role: Role | null;
  readonly scopes: readonly Scope[];
}

export const SESSION_TOKEN_PREFIX = "svs_";
export const PORTAL_SESSION_TOKEN_PREFIX = "svp_";

/**
 * Who stands behind a credential, as kept beside what it did: the API key (`key:<id>`), or the
 * signed-in user (`user:<id>`), whichever of their sessions it is, so that signing in again
 * is still the same caller; a portal session (`portal:<id>`), which stands for nobody else.
 * Idempotency keys and listen sessions (decision 39) are bound to it.
 */
export function principalOf(credential: Credential): string {
  switch (credential.kind) {
    case "api_key":
      return `key:${credential.apiKey.id}`;
    case "session":
      return `user:${credential.session.user.id}`;
    case "portal":
      return `portal:${credential.portal.id}`;
    default:
      return unreachable(credential);
  }
}

/**
 * The credential a bearer token stands for. The prefix says which table to look in; an
 * unknown, revoked or expired token of either kind is 401, with a message on how to get a
 * new one. An API key's use is recorded without holding up the request (the store writes it
 * at most once a minute); a failure to record it goes to `onUseNotRecorded`, never to the
 * caller, whose request needs no write. `tokenHash` is the token's `hashToken`, if the caller
 * has it already (the request budget worked it out).
 */
export async function identify(
  store: CredentialStores,
  token: string,
  onUseNotRecorded: (error: unknown) => void,
  tokenHash: string = hashToken(token),
): Promise<Credential> {
  if (token.startsWith(PORTAL_SESSION_TOKEN_PREFIX)) {
    const portal = await store.portal.findActiveSession(tokenHash);
    if (portal === null) {
      throw new AppError(
        "unauthenticated",
        "The portal session has ended or was revoked. Open a new portal link.",
      );
    }
    return { kind: "portal", portal };
  }
  if (token.startsWith(SESSION_TOKEN_PREFIX)) {
    const session = await store.credentials.findActiveSession(tokenHash);
    if (session === null) {
      throw new AppError(
        "unauthenticated",
        "The session has expired or was signed out. Sign in again with `svc auth login`.",
      );
    }
    return { kind: "session", session };
  }
  const apiKey = await store.credentials.findActiveApiKey(tokenHash);
  if (apiKey === null) {
    throw new AppError(
      "unauthenticated",
      "The API key is not valid or has been revoked. Set SERVICE_API_KEY to a valid key or sign in with `svc auth login`.",
    );
  }
  store.credentials.recordApiKeyUse(apiKey.id).catch(onUseNotRecorded);
  return { kind: "api_key", apiKey };
}

/** An operator key (decision 42): an API key bound to no workspace. */
export function isOperatorKey(
  credential: Credential,
): credential is { readonly kind: "api_key"; readonly apiKey: ApiKey & { workspaceId: null } } {
  return credential.kind === "api_key" && credential.apiKey.workspaceId === null;
}

/**
 * What the credential may do in `workspaceId`: an API key's own scopes in its one workspace,
 * an operator key's workspace scopes in every workspace there is (decision 42), a user's
 * role's scopes in a workspace they are a member of, a portal session's role's scopes in its
 * one workspace. Null means no access at all, which naming another workspace can never change.
 */
export async function scopesIn(
  store: CredentialStores,
  credential: Credential,
  workspaceId: string,
): Promise<readonly Scope[] | null> {
  switch (credential.kind) {
    case "api_key": {
      const { apiKey } = credential;
      if (apiKey.workspaceId !== null) {
        return apiKey.workspaceId === workspaceId ? workspaceScopes(apiKey) : null;
      }
      return (await store.credentials.getWorkspace(workspaceId)) === null
        ? null
        : workspaceScopes(apiKey);
    }
    case "session": {
      const role = await store.credentials.findMembershipRole(
        credential.session.user.id,
        workspaceId,
      );
      return role === null ? null : ROLE_SCOPES[role];
    }
    case "portal":
      return credential.portal.workspaceId === workspaceId
        ? ROLE_SCOPES[credential.portal.role]
        : null;
    default:
      return unreachable(credential);
  }
}

/** The workspace scopes among a key's: what it may do inside a workspace. */
function workspaceScopes(apiKey: ApiKey): Scope[] {
  return apiKey.scopes.filter((scope): scope is Scope =>
    (SCOPES as readonly string[]).includes(scope),
  );
}

/**
 * Every workspace the credential is a member of, by id. An operator key is a member of none:
 * it reaches every workspace, which `GET /v1/workspaces` lists a page at a time.
 */
export async function workspacesOf(
  store: CredentialStores,
  credential: Credential,
): Promise<WorkspaceAccess[]> {
  switch (credential.kind) {
    case "api_key": {
      const { apiKey } = credential;
      if (apiKey.workspaceId === null) return [];
      const workspace = await store.credentials.getWorkspace(apiKey.workspaceId);
      return [
        {
          id: apiKey.workspaceId,
          name: workspace?.name ?? "",
          role: null,
          scopes: workspaceScopes(apiKey),
        },
      ];
    }
    case "session":
      return (await store.credentials.listMemberships(credential.session.user.id)).map(
        (membership) => ({
          id: membership.workspaceId,
          name: membership.workspaceName,
          role: membership.role,
          scopes: ROLE_SCOPES[membership.role],
        }),
      );
    case "portal": {
      const { workspaceId, role } = credential.portal;
      const workspace = await store.credentials.getWorkspace(workspaceId);
      return [{ id: workspaceId, name: workspace?.name ?? "", role, scopes: ROLE_SCOPES[role] }];
    }
    default:
      return unreachable(credential);
  }
}

function unreachable(value: never): never {
  throw new Error(`unexpected credential ${JSON.stringify(value)}`);
}
