import type { OperatorScope, Scope } from "../interfaces.ts";
import type { Credential } from "./auth/credential.ts";

// What hooks attach to a request, and what a route declares: Fastify's typed extension points.
declare module "fastify" {
  interface FastifyContextConfig {
    /** The scope a route needs in the workspace of its path. */
    scope?: Scope;
    /** The operator scope a route needs: only an operator key that has it may call it (decision 42). */
    operatorScope?: OperatorScope;
    /** A route that needs a credential but acts on no workspace (who am I, sign out). */
    authenticated?: boolean;
    /** `false`: the dashboard's session cookie is refused here (decision 39). */
    cookie?: false;
    /**
     * `false`: the request budget does not count it (decision 45): a listen stream, one request
     * that lasts as long as its session is listened to.
     */
    budget?: false;
    /** The setting a route's own `bodyLimit` comes from, named in a 413; else requestBodyLimit. */
    bodyLimitSetting?: "eventBodyLimit";
    /** A probe (/healthz, /readyz, /metrics): answered without credentials, logged at debug. */
    probe?: boolean;
  }
  interface FastifyRequest {
    /** The JSON body exactly as received, for idempotency fingerprints. */
    rawBody?: string;
    /** Who is calling, on routes with a scope or marked `authenticated`. */
    credential?: Credential;
    /** The credential came in the dashboard's session cookie (decision 35), not a header. */
    viaCookie?: boolean;
    /** What the credential may do in the path's workspace, on routes with a scope. */
    grantedScopes?: readonly Scope[];
    /**
     * The workspace of the path, once the credential is known to have the route's scope there;
     * on an operator route, the path's workspace or "" (the server) where it names none.
     */
    authorisedWorkspace?: string;
    /**
     * Its access-log line goes at `debug`: one more refusal of a client over its request
     * budget within a second of the last one logged (decision 45).
     */
    quietLog?: boolean;
    /**
     * The token the request presents and its hash (`hashToken`), worked out once by the request
     * budget, which names a client by it; authentication looks the credential up by the same
     * hash instead of hashing the token again (decision 54).
     */
    presentedTokenHash?: { readonly token: string; readonly hash: string };
    /** The idempotency key this request holds, while it runs. */
    idempotency?: { readonly workspaceId: string; readonly key: string };
  }
}
