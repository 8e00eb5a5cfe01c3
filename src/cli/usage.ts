import { AppError } from "../errors.ts";

/** A usage error: the command line or its input was wrong; it points at the command's help. */
export function usageError(command: string, message: string): AppError {
  const help = command === "" ? "svc --help" : `svc ${command} --help`;
  return new AppError("usage_error", `${message} See \`${help}\`.`);
}

/** An option the command cannot do without, such as `--output` where a secret is issued. */
export function requireOption<T>(value: T | undefined, command: string, message: string): T {
  if (value === undefined) throw usageError(command, message);
  return value;
}
