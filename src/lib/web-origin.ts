/**
 * Web origins as an operator writes them in a setting (`publicUrl`, `portalFrameAncestors`):
 * `https://host[:port]`, nothing after. Each is checked character by character before it
 * goes into a header: a `;`, a quote, a space or a comma in a CSP source would end it and
 * start another directive of the attacker's choosing.
 */

/** `http(s)://host[:port]`: a DNS name, an IPv4 address or a bracketed IPv6 address. */
const originPattern =
  /^https?:\/\/(?:(?:\*\.)?[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The origin `text` names, lower-cased, or null when it is not one. `wildcard`: a leading
 * `*.` in the host is taken (any subdomain, as CSP reads it).
 */
export function parseWebOrigin(text: string, options: { wildcard?: boolean } = {}): string | null {
  const origin = text.trim().toLowerCase().replace(/\/$/, "");
  if (!originPattern.test(origin)) return null;
  if (origin.includes("*") && options.wildcard !== true) return null;
  const port = /:([0-9]+)$/.exec(origin)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return null;
  return origin;
}
