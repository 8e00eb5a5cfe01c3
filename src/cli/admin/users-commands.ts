import type { Command } from "commander";
import type { CliIo } from "../io.ts";
import { registerUserCreate } from "./users-create.ts";
import { registerUserDelete } from "./users-delete.ts";
import { registerUserList } from "./users-list.ts";
import { registerUserResetPassword } from "./users-reset-password.ts";

export function registerUserCommands(admin: Command, io: CliIo): void {
  const users = admin
    .command("users")
    .description("manage users who sign in with `svc auth login`");
  registerUserCreate(users, io);
  registerUserList(users, io);
  registerUserDelete(users, io);
  registerUserResetPassword(users, io);
}
