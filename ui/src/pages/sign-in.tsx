import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { fieldOf } from "../format.ts";
import { messageOf } from "../hooks.ts";
import type { SignedIn } from "../types.ts";
import { Logo } from "../components/logo.tsx";

/** E-mail and password of a user made with `svc admin users create`. */
export function SignInPage({ onSignedIn }: { onSignedIn: (who: SignedIn) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      const who = await api<SignedIn>("POST", "/v1/auth/browser-sessions", {
        email: fieldOf(form, "email"),
        password: fieldOf(form, "password"),
      });
      onSignedIn(who);
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <p class="brand sign-in-brand">
        <Logo />
        <span>svc</span>
        <span class="brand-sub">webhooks</span>
      </p>
      <h1>Sign in to svc</h1>
      <form onSubmit={(event) => void submit(event)}>
        <label for="email">E-mail</label>
        <input id="email" name="email" type="email" autocomplete="username" required />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
        />
        {error !== null && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <section class="account-help" aria-labelledby="account-heading">
        <h2 id="account-heading">No account yet?</h2>
        <p>
          Accounts are made by the operator of this server, on its machine, for one workspace and a
          role (owner, member or viewer):
        </p>
        <pre class="command">
          <code>
            {"svc admin users create --email you@example.com \\\n  --workspace ws_… --role member"}
          </code>
        </pre>
        <p>
          It asks for the password on the terminal, or reads it from standard input;{" "}
          <code>svc admin workspaces list</code> shows the workspace ids. API keys do not sign in
          here; use them with the <code>svc</code> command line and the API.
        </p>
      </section>
    </main>
  );
}
