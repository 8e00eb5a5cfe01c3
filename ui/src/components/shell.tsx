import { useState } from "preact/hooks";
import { api, ApiError } from "../api.ts";
import { useHash } from "../hooks.ts";
import { href, parseRoute } from "../routes.ts";
import type { SignedIn, WorkspaceAccess } from "../types.ts";
import { Logo } from "./logo.tsx";
import { Page, SectionNav } from "./sections.tsx";

/** The signed-in frame: workspace switcher, navigation, sign-out, and the page of the route. */
export function Shell({ who, onSignedOut }: { who: SignedIn; onSignedOut: () => void }) {
  const route = parseRoute(useHash());
  // By name, so that the first (where the dashboard opens) does not depend on the database.
  const workspaces = [...who.workspaces].sort(
    (a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id),
  );
  const [first] = workspaces;
  const workspace: WorkspaceAccess | undefined =
    route.page === "home" ? first : workspaces.find((each) => each.id === route.workspace);

  const [signOutError, setSignOutError] = useState<string | null>(null);
  const signOut = async (): Promise<void> => {
    try {
      await api("DELETE", "/v1/auth/session");
    } catch (error) {
      // Signed out already (401) is signed out; anything else leaves the session alive, and
      // the page must not pretend otherwise (a shared computer).
      if (!(error instanceof ApiError && error.status === 401)) {
        setSignOutError(
          `Not signed out: ${error instanceof Error ? error.message : String(error)} Try again.`,
        );
        return;
      }
    }
    window.location.hash = "#/";
    onSignedOut();
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a
          class="brand"
          href={
            workspace === undefined ? "#/" : href({ page: "destinations", workspace: workspace.id })
          }
        >
          <Logo />
          <span>svc</span>
          <span class="brand-sub">webhooks</span>
        </a>
        {workspace !== undefined && <SectionNav route={route} workspaceId={workspace.id} />}
        <div class="who">
          <label for="workspace">Workspace</label>
          <select
            id="workspace"
            value={workspace?.id ?? ""}
            onChange={(event) => {
              const id = event.currentTarget.value;
              window.location.hash = href({ page: "destinations", workspace: id });
            }}
          >
            {workspaces.map((each) => (
              <option key={each.id} value={each.id}>
                {each.name === "" ? each.id : each.name}
              </option>
            ))}
          </select>
          <span class="user">
            {who.user?.email}
            {workspace?.role !== undefined && workspace.role !== null && ` (${workspace.role})`}
          </span>
          <button type="button" class="secondary" onClick={() => void signOut()}>
            Sign out
          </button>
          {signOutError !== null && (
            <p role="alert" class="error">
              {signOutError}
            </p>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {workspace === undefined ? (
          <p>
            {workspaces.length === 0
              ? "Your account is a member of no workspace. Ask an operator to add you."
              : "You are not a member of this workspace."}
          </p>
        ) : (
          <Page route={route} workspace={workspace} />
        )}
      </main>
    </>
  );
}
