import type { Command } from "commander";
import type { CliIo } from "../io.ts";
import { registerLogin } from "./login.ts";
import { registerLogout } from "./logout.ts";
import { registerStatus } from "./status.ts";

/** `svc auth`: sign in, see who you are, sign out; each subcommand in its own file. */
export function registerAuthCommands(program: Command, io: CliIo): void {
  const group = program
    .command("auth")
    .description("sign in to the API, show who you are signed in as, sign out")
    .helpCommand(false)
    .addHelpText(
      "after",
      `
Credentials, in order of precedence: SERVICE_API_KEY, then those saved by "svc auth login".
The API: SERVICE_API_URL, then the saved credentials' API URL, then http://127.0.0.1:8787.

Examples:
  $ svc auth login
  $ svc auth status
  $ svc auth logout`,
    );
  registerLogin(group, io);
  registerStatus(group, io);
  registerLogout(group, io);
}
