import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, usePortalSession, whenSignedOut } from "../api.ts";
import { messageOf } from "../hooks.ts";
import type { OpenedPortalSession } from "../types.ts";
import type { Theming } from "./link.ts";
import { PortalShell } from "./portal-shell.tsx";

type PortalState =
  | { state: "opening" }
  | { state: "open"; session: OpenedPortalSession }
  /** No token in the address: opened without a link, or reloaded (the session was in memory). */
  | { state: "no-link" }
  | { state: "dead-link" }
  | { state: "ended" }
  | { state: "failed"; message: string };

/**
 * The customer portal (decision 43): trades the link's one-time token for a session, then
 * shows the one workspace it reaches. The session's token lives in this page's memory only
 * (`api.ts`); when the session ends — its time is up, it was ended here or revoked by the
 * platform — the page says so and forgets the token.
 */
export function PortalApp({ token, theming }: { token: string | null; theming: Theming }) {
  const [portal, setPortal] = useState<PortalState>(
    token === null ? { state: "no-link" } : { state: "opening" },
  );

  const ended = (): void => {
    usePortalSession(null);
    setPortal({ state: "ended" });
  };

  useEffect(() => {
    usePortalSession(null);
    whenSignedOut(ended);
    if (token === null) return;
    api<OpenedPortalSession>("POST", "/v1/auth/portal-sessions", { token }).then(
      (session) => {
        usePortalSession(session.token);
        setPortal({ state: "open", session });
      },
      (error: unknown) => {
        setPortal(
          error instanceof ApiError && error.code === "portal_link_invalid"
            ? { state: "dead-link" }
            : { state: "failed", message: messageOf(error) },
        );
      },
    );
  }, []);

  const expiresAt = portal.state === "open" ? portal.session.expires_at : null;
  useEffect(() => {
    if (expiresAt === null) return undefined;
    // setTimeout's longest wait is 24.8 days; a session is at most a day.
    const timer = setTimeout(ended, Math.max(0, Date.parse(expiresAt) - Date.now()));
    return () => {
      clearTimeout(timer);
    };
  }, [expiresAt]);

  switch (portal.state) {
    case "opening":
      return <p class="loading">Opening {theming.name}…</p>;
    case "open":
      return <PortalShell session={portal.session} theming={theming} onEnded={ended} />;
    case "no-link":
      return (
        <Notice theming={theming} heading="Open this page from a portal link">
          This page shows your webhooks when it is opened by a link from {theming.name}. Each link
          works once, and the page keeps its session only while it is open: after a reload, open the
          portal again from the site you came from.
        </Notice>
      );
    case "dead-link":
      return (
        <Notice theming={theming} heading="This portal link no longer works">
          A portal link opens once, within minutes of being made, and this one has been used, has
          expired or was withdrawn. Go back to {theming.name} and open the portal again for a new
          link.
        </Notice>
      );
    case "ended":
      return (
        <Notice theming={theming} heading="Your session has ended">
          The portal session has run its time or was ended. Open the portal again from{" "}
          {theming.name} to go on.
        </Notice>
      );
    case "failed":
      return (
        <Notice theming={theming} heading="The portal could not be opened">
          {portal.message} Try the link again; if it has been used, ask {theming.name} for a new
          one.
        </Notice>
      );
  }
}

function Notice({
  theming,
  heading,
  children,
}: {
  theming: Theming;
  heading: string;
  children: ComponentChildren;
}) {
  return (
    <main class="portal-notice">
      <p class="portal-product">{theming.name}</p>
      <h1>{heading}</h1>
      <p>{children}</p>
    </main>
  );
}
