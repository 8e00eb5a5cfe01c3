import { AppError } from "../errors.ts";
import type { Resolver } from "../interfaces.ts";
import { isIpLiteral, type AddressPolicy } from "./address-policy.ts";
import type { PortSet } from "./port-set.ts";
import { firstForbiddenCharacter } from "./url-characters.ts";

export const MAX_URL_LENGTH = 2048;

export interface UrlCheckDependencies {
  readonly resolver: Resolver;
  readonly addressPolicy: AddressPolicy;
  /** The ports a destination on a public host may use (`destinationPorts`). */
  readonly destinationPorts: PortSet;
}

export interface CheckedUrl {
  /** The parser's canonical form (`url.href`): what is stored and shown. */
  readonly url: URL;
  /** Every address of the host, each allowed: the ones a delivery may connect to. */
  readonly addresses: string[];
}

/**
 * Checks a destination URL against the network policy: the URL rules of
 * `parseDestinationUrl`, a host whose every address is public (or allowlisted), and a port
 * among `destinationPorts`. An IP literal in any notation (127.1, 0x7f.1, 2130706433,
 * [::ffff:7f00:1]…) arrives here already normalised by the WHATWG URL parser, so it is
 * classified, never resolved.
 */
export async function checkDestinationUrl(
  raw: string,
  dependencies: UrlCheckDependencies,
): Promise<CheckedUrl> {
  const url = parseDestinationUrl(raw);
  const literal = isIpLiteral(url.hostname);
  const addresses = literal
    ? [url.hostname]
    : await resolveHost(url.hostname, dependencies.resolver);
  let allowlistedOnly = true;
  for (const address of addresses) {
    const verdict = dependencies.addressPolicy.check(address);
    if (!verdict.allowed) {
      // What a name resolves to is not told: the API must not map the server's network.
      const why = literal ? `: it ${verdict.reason}` : " (it resolves to a non-public address)";
      throw new AppError(
        "url_not_public",
        `The destination host ${url.hostname} is not on the public internet${why}.`,
        { param: "url" },
      );
    }
    allowlistedOnly &&= verdict.allowlisted;
  }
  if (!allowlistedOnly) checkPort(url, dependencies.destinationPorts);
  return { url, addresses };
}

/**
 * The syntactic rules alone, without resolving the host: at most 2048 characters as sent and
 * once canonical, none of the characters of `url-characters.ts` anywhere, https, no user name
 * or password. Returns the parsed URL, whose `href` is the canonical form.
 */
export function parseDestinationUrl(raw: string): URL {
  const invalid = (why: string): AppError =>
    new AppError("invalid_url", `The destination URL ${why}.`, { param: "url" });
  if (raw.length > MAX_URL_LENGTH) {
    throw invalid(`is ${raw.length} characters long; at most ${MAX_URL_LENGTH} are allowed`);
  }
  // Before the parser, which would drop or trim some of them without a word.
  const character = firstForbiddenCharacter(raw);
  if (character !== null) {
    const { codePoint, kind, position } = character;
    throw invalid(`contains ${codePoint}, ${kind}, at position ${position}`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("is not a valid absolute URL");
  }
  if (url.protocol !== "https:") throw invalid(`must use https://, not ${url.protocol}//`);
  if (url.username !== "" || url.password !== "") {
    throw invalid("must not contain a user name or password");
  }
  // The canonical form is what is stored and shown, so it keeps the limit too.
  if (url.href.length > MAX_URL_LENGTH) {
    throw invalid(
      `is ${url.href.length} characters long once normalised (characters outside ASCII are percent-encoded); at most ${MAX_URL_LENGTH} are allowed`,
    );
  }
  return url;
}

/**
 * The operator's allowlist is exempt: the port rule protects third parties' hosts on the
 * public internet (their SSH, mail and database ports, and a port scan through `last_error`),
 * and allowlisted ranges are the operator's own networks (decision 26).
 */
function checkPort(url: URL, ports: PortSet): void {
  const port = url.port === "" ? 443 : Number(url.port);
  if (ports.has(port)) return;
  throw new AppError(
    "url_port_not_allowed",
    `The destination port ${port} is not allowed; this server delivers to ports ${ports.toString()}.`,
    { param: "url" },
  );
}

/** RFC 6761: `localhost` and every name under it are loopback, whatever a resolver says. */
function isLocalhostName(hostname: string): boolean {
  return /(^|\.)localhost\.?$/i.test(hostname);
}

async function resolveHost(hostname: string, resolver: Resolver): Promise<string[]> {
  if (isLocalhostName(hostname)) return ["127.0.0.1", "::1"];
  let addresses: string[];
  try {
    addresses = await resolver.resolve(hostname);
  } catch (error) {
    throw new AppError(
      "url_unresolvable",
      `The destination host ${hostname} could not be resolved.`,
      { param: "url", cause: error },
    );
  }
  if (addresses.length === 0) {
    throw new AppError("url_unresolvable", `The destination host ${hostname} has no address.`, {
      param: "url",
    });
  }
  return addresses;
}
