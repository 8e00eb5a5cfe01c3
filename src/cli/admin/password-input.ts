import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "../../crypto/passwords.ts";
import { AppError } from "../../errors.ts";
import type { CliIo } from "../io.ts";
import { isInteractive, readFirstLine, TerminalDialog } from "../prompt.ts";

/** How the password is given, for the help of the commands that read one. */
export const PASSWORD_INPUT_HELP = `The password is asked on a terminal (twice, not shown), or read from the first line of
standard input; ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters. It is stored as a scrypt hash.`;

function checkedPassword(password: string | null, unchanged: string): string {
  if (password === null) throw new AppError("cancelled", `No password given; ${unchanged}.`);
  const length = password.length;
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
    throw new AppError(
      "weak_password",
      `The password must have ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters; it has ${length}.`,
    );
  }
  return password;
}

/**
 * A user's new password: asked twice on a terminal, never shown; otherwise the first line of
 * standard input. Never a flag: command lines are visible to other users and kept in shell
 * histories. `unchanged` says what did not happen when no password comes ("nothing was
 * created").
 */
export async function readNewPassword(
  io: CliIo,
  email: string,
  unchanged: string,
): Promise<string> {
  if (!isInteractive(io)) return checkedPassword(await readFirstLine(io), unchanged);
  const dialog = new TerminalDialog(io);
  try {
    const password = checkedPassword(await dialog.askSecret(`Password for ${email}: `), unchanged);
    const again = await dialog.askSecret("Repeat the password: ");
    if (again !== password) {
      throw new AppError("usage_error", `The two passwords differ; ${unchanged}.`);
    }
    return password;
  } finally {
    dialog.close();
  }
}
