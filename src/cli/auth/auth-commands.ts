import type { Command } from "commander";
import { DEFAULT_API_URL } from "../client/api-url.ts";
import type { LoginOptions } from "./login.ts";
import { action } from "../command.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";

/** `svc auth`: sign in, see who you are, sign out; each subcommand in its own file. */
export function registerAuthCommands(program: Command, io: CliIo): void {
  const group = program
    .command("auth")
    .description("sign in to the API, choose a default workspace, show who you are, sign out")
    .helpCommand(false)
    .addHelpText(
      "after",
      `
Credentials, in order of precedence: SERVICE_API_KEY, then those saved by "svc auth login".
The API: SERVICE_API_URL, then the saved credentials' API URL, then http://127.0.0.1:8787.
The workspace: --workspace, then SERVICE_WORKSPACE_ID, then the default chosen by "svc auth
switch" (with the saved credentials), then the credentials' only workspace.

Examples:
  $ svc auth login
  $ svc auth switch --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc auth status
  $ svc auth logout`,
    );
  registerLogin(group, io);
  registerSwitch(group, io);
  registerStatus(group, io);
  registerLogout(group, io);
}

function registerLogin(group: Command, io: CliIo): void {
  group
    .command("login")
    .description("sign in: save a session (or, with --with-token, an API key) for svc to use")
    .option("--with-token", "read an API key from standard input instead of signing in")
    .option("--email <address>", "the e-mail address to sign in with (else asked)")
    .option("--password-stdin", "read the password from standard input (needs --email)")
    .option("--api-url <url>", "the API to sign in to (default: env SERVICE_API_URL, else asked)")
    .addHelpText(
      "after",
      `
On a terminal it asks for the API URL (default SERVICE_API_URL, else ${DEFAULT_API_URL}),
your e-mail address and password (not shown as you type). The server issues a session token,
saved with the API URL in $XDG_CONFIG_HOME/svc/credentials.json (else
~/.config/svc/credentials.json), mode 0600; the password is never saved. Sessions last 30
days unless the server is configured otherwise. SERVICE_API_KEY, when set, takes precedence.
--workspace <id> saves that workspace as the default (see "svc auth switch").

Examples:
  $ svc auth login
  $ svc auth login --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc auth login --with-token < owner.key
  $ printf '%s\\n' "$PASSWORD" | svc auth login --email you@example.com --password-stdin`,
    )
    .action(
      action<LoginOptions>(io, { accepts: ["workspace"] }, async (options) =>
        (await import("./login.ts")).login(options, io),
      ),
    );
}

function registerSwitch(group: Command, io: CliIo): void {
  group
    .command("switch")
    .description("choose the default workspace: the one commands act on when none is named")
    .usage("--workspace <id>")
    .addHelpText(
      "after",
      `
The default is kept with the saved credentials (and removed with them by "svc auth logout").
A command acts on --workspace, else SERVICE_WORKSPACE_ID, else this default, else the
credentials' only workspace. It must be a workspace the credentials reach; "svc auth status"
shows it.

Examples:
  $ svc auth switch --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc auth status`,
    )
    .action(
      action<GlobalOptions>(io, { accepts: ["workspace"] }, async (options) =>
        (await import("./switch.ts")).switchWorkspace(options, io),
      ),
    );
}

function registerStatus(group: Command, io: CliIo): void {
  group
    .command("status")
    .description("show who svc signs in as, against which API, with which workspaces and scopes")
    .addHelpText(
      "after",
      `
Asks the API who the credentials in use belong to. Exits 4 when there are none, or when
the API refuses them (an expired or signed-out session: sign in again).

Examples:
  $ svc auth status
  $ svc auth status --json`,
    )
    .action(
      action<GlobalOptions>(io, { accepts: [] }, async () =>
        (await import("./status.ts")).status(io),
      ),
    );
}

function registerLogout(group: Command, io: CliIo): void {
  group
    .command("logout")
    .description("sign out: revoke the saved session on the server and remove it from this machine")
    .addHelpText(
      "after",
      `
A saved API key (from --with-token) is only removed from this machine; the key stays valid
until an operator revokes it. SERVICE_API_KEY is not touched.

Examples:
  $ svc auth logout`,
    )
    .action(
      action<GlobalOptions>(io, { accepts: [] }, async () =>
        (await import("./logout.ts")).logout(io),
      ),
    );
}
