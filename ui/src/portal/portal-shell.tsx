import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api.ts";
import { Page, SectionNav } from "../components/sections.tsx";
import { Time } from "../components/time.tsx";
import { useHash } from "../hooks.ts";
import { href, parseRoute } from "../routes.ts";
import { SurfaceContext } from "../surface.ts";
import type { OpenedPortalSession } from "../types.ts";
import type { Theming } from "./link.ts";

/**
 * The portal's frame: the product's name, the workspace's sections, when the session ends and
 * a way to end it now. One workspace, no switcher, no user: the session reaches nothing else,
 * and the API refuses it anywhere else.
 */
export function PortalShell({
  session,
  theming,
  onEnded,
}: {
  session: OpenedPortalSession;
  theming: Theming;
  onEnded: () => void;
}) {
  const route = parseRoute(useHash());
  const { workspace } = session;
  const elsewhere = route.page !== "home" && route.workspace !== workspace.id;
  const [endError, setEndError] = useState<string | null>(null);
  // "ends in 59 minutes" is said again every half minute.
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => {
      setTick((value) => value + 1);
    }, 30_000);
    return () => {
      clearInterval(timer);
    };
  }, []);

  const endSession = async (): Promise<void> => {
    try {
      await api("DELETE", "/v1/auth/session");
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) {
        setEndError(`Not ended: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
    }
    onEnded();
  };

  return (
    <SurfaceContext.Provider value="portal">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href({ page: "destinations", workspace: workspace.id })}>
          <span>{theming.name}</span>
          <span class="brand-sub">webhooks</span>
        </a>
        <SectionNav route={route} workspaceId={workspace.id} />
        <div class="who">
          <span class="user">
            {workspace.name === "" ? workspace.id : workspace.name} ({workspace.role})
          </span>
          <span class="session-ends" data-testid="session-ends">
            Session ends <Time iso={session.expires_at} absoluteFirst />
          </span>
          <button type="button" class="secondary" onClick={() => void endSession()}>
            End session
          </button>
          {endError !== null && (
            <p role="alert" class="error">
              {endError}
            </p>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {elsewhere ? (
          <p>
            This portal shows one workspace only.{" "}
            <a href={href({ page: "destinations", workspace: workspace.id })}>
              Back to its destinations
            </a>
          </p>
        ) : (
          <Page route={route} workspace={workspace} />
        )}
      </main>
    </SurfaceContext.Provider>
  );
}
