import { useEffect, useState } from "preact/hooks";
import { api, ApiError, useCsrfToken, whenSignedOut } from "./api.ts";
import { Shell } from "./components/shell.tsx";
import { SignInPage } from "./pages/sign-in.tsx";
import type { SignedIn } from "./types.ts";

type Session =
  { state: "loading" } | { state: "signed-out" } | { state: "signed-in"; who: SignedIn };

/**
 * Asks the server who is signed in (the cookie is HttpOnly: the page cannot look itself), then
 * shows the sign-in form or the dashboard. The CSRF token comes with the answer and is kept in
 * memory only.
 */
export function App() {
  const [session, setSession] = useState<Session>({ state: "loading" });

  const signedIn = (who: SignedIn): void => {
    useCsrfToken(who.csrf_token ?? null);
    setSession({ state: "signed-in", who });
  };
  const signedOut = (): void => {
    useCsrfToken(null);
    setSession({ state: "signed-out" });
  };

  useEffect(() => {
    whenSignedOut(signedOut);
    api<SignedIn>("GET", "/v1/auth/session").then(signedIn, (error: unknown) => {
      if (error instanceof ApiError && error.status === 401) signedOut();
      else setSession({ state: "signed-out" });
    });
  }, []);

  switch (session.state) {
    case "loading":
      return <p class="loading">Loading…</p>;
    case "signed-out":
      return <SignInPage onSignedIn={signedIn} />;
    case "signed-in":
      return <Shell who={session.who} onSignedOut={signedOut} />;
  }
}
