/**
 * The address blocks that are not public destinations, written down once. The reference is
 * IANA's IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, as updated to 2025);
 * a few blocks from elsewhere are marked `"not listed"`. Names are IANA's, worded to be read
 * in a sentence ("in the link-local block 169.254.0.0/16"). A test walks the whole table.
 *
 * Beyond the table, an IPv6 destination must be inside 2000::/3, the global unicast block
 * (RFC 4291): everything else of the IPv6 space is unassigned or reserved, and ipaddr.js
 * calls such addresses "unicast" only because it has no other name for them.
 */
export interface SpecialPurposeBlock {
  readonly cidr: string;
  /** What IANA calls it, in words for a sentence. */
  readonly name: string;
  readonly rfc: string;
  /**
   * IANA's "Globally Reachable": `"n/a"` where IANA gives no value (tunnels, deprecated
   * blocks); `"not listed"` for a block from outside the special-purpose registries.
   */
  readonly globallyReachable: boolean | "n/a" | "not listed";
  /**
   * `refused`, or judged by the IPv4 address in its last 32 bits (the forms that only carry
   * an IPv4 address, which is what is really reached).
   */
  readonly destination: "refused" | "embedded IPv4";
}

/*
 * Blocks IANA marks globally reachable are refused all the same: each is anycast or
 * infrastructure of a protocol (PCP, TURN, AMT, AS112 DNS sinks), never a webhook receiver,
 * and a request to one reaches whichever operator's instance is nearest.
 */
export const ipv4Blocks: readonly SpecialPurposeBlock[] = [
  block("0.0.0.0/8", '"this network"', "RFC 791", false),
  block("0.0.0.0/32", '"this host on this network"', "RFC 1122", false),
  block("10.0.0.0/8", "private-use", "RFC 1918", false),
  block("100.64.0.0/10", "shared address space (carrier-grade NAT)", "RFC 6598", false),
  block("127.0.0.0/8", "loopback", "RFC 1122", false),
  block("169.254.0.0/16", "link-local", "RFC 3927", false),
  block("172.16.0.0/12", "private-use", "RFC 1918", false),
  block("192.0.0.0/24", "IETF protocol assignments", "RFC 6890", false),
  block("192.0.0.0/29", "IPv4 service continuity prefix", "RFC 7335", false),
  block("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", false),
  block("192.0.0.9/32", "Port Control Protocol anycast", "RFC 7723", true),
  block("192.0.0.10/32", "Traversal Using Relays around NAT (TURN) anycast", "RFC 8155", true),
  block("192.0.0.170/32", "NAT64/DNS64 discovery", "RFC 8880", false),
  block("192.0.0.171/32", "NAT64/DNS64 discovery", "RFC 8880", false),
  block("192.0.2.0/24", "documentation (TEST-NET-1)", "RFC 5737", false),
  block("192.31.196.0/24", "AS112-v4", "RFC 7535", true),
  block("192.52.193.0/24", "Automatic Multicast Tunneling (AMT)", "RFC 7450", true),
  block("192.88.99.0/24", "deprecated 6to4 relay anycast", "RFC 7526", "n/a"),
  block("192.88.99.2/32", "6a44-relay anycast", "RFC 6751", false),
  block("192.168.0.0/16", "private-use", "RFC 1918", false),
  block("192.175.48.0/24", "direct delegation AS112 service", "RFC 7534", true),
  block("198.18.0.0/15", "benchmarking", "RFC 2544", false),
  block("198.51.100.0/24", "documentation (TEST-NET-2)", "RFC 5737", false),
  block("203.0.113.0/24", "documentation (TEST-NET-3)", "RFC 5737", false),
  block("240.0.0.0/4", "reserved", "RFC 1112", false),
  block("255.255.255.255/32", "limited broadcast", "RFC 8190", false),
  // IANA's IPv4 address space registry: a group, not a host.
  block("224.0.0.0/4", "multicast", "RFC 5771", "not listed"),
];

export const ipv6Blocks: readonly SpecialPurposeBlock[] = [
  block("::1/128", "loopback", "RFC 4291", false),
  block("::/128", "unspecified", "RFC 4291", false),
  /*
   * IPv4-compatible IPv6, deprecated by RFC 4291 (2006) and not in the registry: refused
   * whatever IPv4 address it carries. Today's stacks send [::808:808] out as IPv6 to an
   * unrouted address, so no receiver is reached through one; a host that still routes ::/96
   * into an automatic tunnel sends [::7f00:1] to its own 127.0.0.1. Judging the embedded
   * address would admit a form nothing legitimate uses, on a guess at what the host does.
   */
  block("::/96", "deprecated IPv4-compatible IPv6", "RFC 4291", "not listed"),
  block("::ffff:0:0/96", "IPv4-mapped", "RFC 4291", false, "embedded IPv4"),
  // The well-known NAT64 prefix: DNS64 networks reach public IPv4 hosts through it.
  block("64:ff9b::/96", "IPv4/IPv6 translation (NAT64)", "RFC 6052", true, "embedded IPv4"),
  // Local-use NAT64: the operator's own translators, to whatever IPv4 space they choose.
  block("64:ff9b:1::/48", "local-use IPv4/IPv6 translation", "RFC 8215", false),
  block("100::/64", "discard-only", "RFC 6666", false),
  block("100:0:0:1::/64", "dummy IPv6 prefix", "RFC 9780", false),
  block("2001::/23", "IETF protocol assignments", "RFC 2928", false),
  // Teredo hides its IPv4 addresses (the client's is inverted); tunnels are not receivers.
  block("2001::/32", "Teredo", "RFC 4380", "n/a"),
  block("2001:1::1/128", "Port Control Protocol anycast", "RFC 7723", true),
  block("2001:1::2/128", "Traversal Using Relays around NAT (TURN) anycast", "RFC 8155", true),
  block("2001:1::3/128", "DNS-SD Service Registration Protocol anycast", "RFC 9665", true),
  block("2001:2::/48", "benchmarking", "RFC 5180", false),
  block("2001:3::/32", "Automatic Multicast Tunneling (AMT)", "RFC 7450", true),
  block("2001:4:112::/48", "AS112-v6", "RFC 7535", true),
  block("2001:10::/28", "deprecated ORCHID", "RFC 4843", "n/a"),
  // Overlay and drone identifiers: names for hosts, not routable locators.
  block("2001:20::/28", "ORCHIDv2", "RFC 7343", true),
  block("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs)", "RFC 9374", true),
  block("2001:db8::/32", "documentation", "RFC 3849", false),
  /*
   * 6to4 is refused whatever IPv4 address it carries, as before: its anycast relays are
   * deprecated (RFC 7526), and a host with a 6to4 interface would send 2002:7f00:1:: to
   * its own 127.0.0.1.
   */
  block("2002::/16", "6to4", "RFC 3056", "n/a"),
  block("2620:4f:8000::/48", "direct delegation AS112 service", "RFC 7534", true),
  block("3fff::/20", "documentation", "RFC 9637", false),
  block("5f00::/16", "segment routing (SRv6) SIDs", "RFC 9602", false),
  block("fc00::/7", "unique-local", "RFC 4193", false),
  block("fe80::/10", "link-local", "RFC 4291", false),
  // IANA's IPv6 address space registry; outside 2000::/3 too, named for a clearer refusal.
  block("ff00::/8", "multicast", "RFC 4291", "not listed"),
];

/** IPv6 destinations must be in it (RFC 4291, section 2.4). */
export const globalUnicastIPv6 = "2000::/3";

function block(
  cidr: string,
  name: string,
  rfc: string,
  globallyReachable: SpecialPurposeBlock["globallyReachable"],
  destination: SpecialPurposeBlock["destination"] = "refused",
): SpecialPurposeBlock {
  return { cidr, name, rfc, globallyReachable, destination };
}
