import { Option, type Command } from "commander";
import { EVENT_SUBSCRIPTIONS } from "../../interfaces.ts";
import { action, type CommandSettings } from "../command.ts";
import type { CliIo } from "../io.ts";
import type { ListenOptions } from "./listen.ts";

/** `svc listen`'s declaration; its body (listen.ts) is imported when it runs (decision 51). */
const settings: CommandSettings = { accepts: ["workspace", "timing"], output: "secret" };

function collect(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function registerListenCommand(program: Command, io: CliIo): void {
  program
    .command("listen")
    .description(
      "forward the workspace's notifications to a local URL, signed as webhooks are; nothing published meanwhile is lost",
    )
    .option("--forward-to <url>", "where to POST each notification (http:// allowed: your machine)")
    .addOption(
      new Option(
        "--route <type=url>",
        "send one event type elsewhere, e.g. job.failed=http://localhost:3000/failed (repeatable)",
      ).argParser(collect),
    )
    .option("--events <types>", `comma-separated: ${EVENT_SUBSCRIPTIONS.join(", ")} (default *)`)
    .option(
      "--name <session>",
      "a named session: kept when svc listen stops, resumed (with what it missed) by the same name",
    )
    .option("--reconnect-for <duration>", "how long to try to reconnect before giving up", "60s")
    .option("--local-timeout <duration>", "how long the local receiver may take to answer", "10s")
    .option("--list", "list the workspace's listen sessions instead")
    .option("--end <session>", "end a listen session (its id or name) instead")
    .addHelpText(
      "after",
      `
Each notification is POSTed to the local URL with the body and the headers a webhook
destination receives (Webhook-Id, Webhook-Signature signed with this session's own secret), so
the receiver code you test is the code that runs in production. One line per notification on
stdout: time, type, id, the local answer's status and time (with --json, one JSON object per
line). The local answer is reported back: it shows in "svc deliveries", and anything but a 2xx
is retried on the schedule, as for a webhook.

The session's signing secret is issued when the session is created: saved to the --output file
(a new file, mode 0600), or else printed once on stderr. A named session keeps its secret and
what is published while svc listen is stopped or disconnected, for listenSessionTtl (72 h by
default) after it was last connected; an unnamed session ends when svc listen stops. A
workspace has at most 20 live sessions. Lost
connections are restored with back-off; if that fails for --reconnect-for, svc listen exits 6.
Ctrl-C stops it (exit 0). Needs the events:read scope.

Examples:
  $ svc listen --forward-to http://localhost:3000/hooks --output whsec-local.txt
  $ svc listen --name laptop --events job.failed --forward-to http://localhost:3000/hooks
  $ svc listen --forward-to http://localhost:3000/hooks --route job.failed=http://localhost:3000/failed
  $ svc listen --list
  $ svc listen --end laptop`,
    )
    .action(
      action<ListenOptions>(io, settings, async (options) =>
        (await import("./listen.ts")).listen(options, io),
      ),
    );
}
