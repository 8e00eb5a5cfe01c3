import { userInfo } from "node:os";
import type pg from "pg";
import pgDriver from "pg";

/** The settings every connection of ours uses, pooled or not. */
export function connectionConfig(url: string): pg.ClientConfig {
  // As libpq does, a URL without a user name means the operating system's user; the driver
  // would look only at $USER, which services (and our tests) often run without.
  pgDriver.defaults.user ??= userInfo().username;
  return {
    connectionString: url,
    // Without a limit, a connect to a host that does not answer waits for ever.
    connectionTimeoutMillis: 5000,
    // Finds a connection whose peer vanished without a word (a network partition).
    keepAlive: true,
    application_name: "svc",
  };
}
