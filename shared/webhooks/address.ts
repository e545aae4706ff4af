// Where an outbound webhook may go (docs/webhooks.md#where-a-webhook-may-go). An endpoint URL is
// checked when it is saved and again at every delivery, after its host is resolved: a name that
// resolved to a public address yesterday may resolve to 127.0.0.1 or the cloud's metadata service
// today. The checks are pure functions over the URL and the resolved addresses; checkDestination
// puts them together around an injected resolver (Deno.resolveDns in production, a fake in tests).
//
// Refused: every address that is not globally reachable unicast. In IPv4 that is 0/8, 10/8,
// 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24, 192.88.99/24, 192.168/16,
// 198.18/15, 198.51.100/24, 203.0.113/24, 224/4 and 240/4. In IPv6 everything outside 2000::/3
// (::, ::1, fc00::/7, fe80::/10, ff00::/8 ...) and the documentation, Teredo and ORCHIDv2 ranges
// inside it; an IPv6 address that carries an IPv4 one (::ffff:a.b.c.d, 64:ff9b::/96, 2002::/16,
// the deprecated ::a.b.c.d) is judged by the IPv4 address it carries. On the local stack loopback is
// allowed (a receiver on the developer's machine), nothing else more.

/** Why a destination is refused. */
export type AddressCategory =
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'metadata'
  | 'shared_cgnat'
  | 'this_network'
  | 'multicast'
  | 'reserved'
  | 'documentation'
  | 'unique_local'
  | 'unspecified';

export type Classification = { allowed: true } | { allowed: false; category: AddressCategory };

export type DestinationRefusal =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'credentials_in_url'
  | 'port_not_allowed'
  | 'address_refused'
  | 'dns_failed';

export type DestinationCheck =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: DestinationRefusal; detail: string };

/** Names to addresses (A and AAAA together). Throws, or returns [], when the name does not resolve. */
export type Resolver = (host: string) => Promise<string[]>;

// ---------------------------------------------------------------------------------------------
// Parsing

/** An IPv4 address in dotted-decimal form (what the WHATWG URL parser leaves) as a 32-bit number. */
export function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    n = n * 256 + v;
  }
  return n;
}

/** An IPv6 address (brackets and a %zone allowed) as eight 16-bit groups, or null. */
export function parseIpv6(text: string): number[] | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) return null;
  // a dotted IPv4 tail (::ffff:127.0.0.1) becomes two groups
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIpv4(tail);
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0] as string);
  const rest = halves.length === 2 ? groups(halves[1] as string) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const out: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    out.push(parseInt(g, 16));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Classification

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;

/** [network, prefix length, category], most specific first where they overlap. */
const IPV4_REFUSED: ReadonlyArray<readonly [number, number, AddressCategory]> = [
  [v4(169, 254, 169, 254), 32, 'metadata'],
  [v4(0, 0, 0, 0), 8, 'this_network'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'shared_cgnat'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link_local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'documentation'],
  [v4(192, 88, 99, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'reserved'],
  [v4(198, 51, 100, 0), 24, 'documentation'],
  [v4(203, 0, 113, 0), 24, 'documentation'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function inV4(addr: number, net: number, bits: number): boolean {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return ((addr & mask) >>> 0) === ((net & mask) >>> 0);
}

export function classifyIpv4(addr: number): Classification {
  for (const [net, bits, category] of IPV4_REFUSED) {
    if (inV4(addr, net, bits)) return { allowed: false, category };
  }
  return { allowed: true };
}

/** Whether the first `bits` bits of an address match a prefix given as groups. */
function inV6(g: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const take = Math.min(16, bits);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if (((g[i] as number) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

const embedded = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo;

export function classifyIpv6(g: readonly number[]): Classification {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return { allowed: false, category: 'unspecified' };
  if (zeroUpTo(7) && g[7] === 1) return { allowed: false, category: 'loopback' };
  // the cloud metadata service's IPv6 address (AWS), fd00:ec2::254
  if (g.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) return { allowed: false, category: 'metadata' };
  // IPv6 forms that carry an IPv4 address are judged by that address
  if (zeroUpTo(5) && g[5] === 0xffff) return classifyIpv4(embedded(g[6] as number, g[7] as number)); // ::ffff:a.b.c.d
  if (inV6(g, [0x64, 0xff9b], 96)) return classifyIpv4(embedded(g[6] as number, g[7] as number)); // NAT64
  if (zeroUpTo(6)) {
    // ::a.b.c.d (deprecated IPv4-compatible): refused whatever it carries
    const carried = classifyIpv4(embedded(g[6] as number, g[7] as number));
    return carried.allowed ? { allowed: false, category: 'reserved' } : carried;
  }
  if (inV6(g, [0x2002], 16)) return classifyIpv4(embedded(g[1] as number, g[2] as number)); // 6to4
  if (inV6(g, [0xfc00], 7)) return { allowed: false, category: 'unique_local' };
  if (inV6(g, [0xfe80], 10)) return { allowed: false, category: 'link_local' };
  if (inV6(g, [0xff00], 8)) return { allowed: false, category: 'multicast' };
  // outside global unicast: ::/8 leftovers, 100::/64 discard, 64:ff9b:1::/48, fec0::/10 ...
  if (!inV6(g, [0x2000], 3)) return { allowed: false, category: 'reserved' };
  if (inV6(g, [0x2001, 0x0db8], 32) || inV6(g, [0x3fff], 20)) return { allowed: false, category: 'documentation' };
  if (inV6(g, [0x2001, 0], 32)) return { allowed: false, category: 'reserved' }; // Teredo
  if (inV6(g, [0x2001, 0x0020], 28)) return { allowed: false, category: 'reserved' }; // ORCHIDv2
  return { allowed: true };
}

/** An address as text (IPv4 dotted, IPv6 with or without brackets); null when it is not one. */
export function classifyAddress(text: string): Classification | null {
  const a = parseIpv4(text);
  if (a !== null) return classifyIpv4(a);
  const b = parseIpv6(text);
  if (b !== null) return classifyIpv6(b);
  return null;
}

/** Whether an address may be reached: public, or loopback on the local stack. */
function addressAllowed(c: Classification, local: boolean): boolean {
  return c.allowed || (local && c.category === 'loopback');
}

// ---------------------------------------------------------------------------------------------
// URLs

/** The ports a webhook may be sent to on a deployment, besides https' own (443, left out of a URL). */
export const WEBHOOK_PORTS: readonly string[] = ['443', '8443'];

export type ParsedDestination =
  | { ok: true; url: URL; literal: string | null }
  | { ok: false; reason: DestinationRefusal; detail: string };

/**
 * The URL's own rules: https (http only on the local stack), no user:password, port 443 or 8443
 * (any on the local stack), a host. The WHATWG
 * parser has already turned odd IPv4 spellings (2130706433, 0x7f000001, 0177.0.0.1, 127.1) into
 * dotted decimal, so a literal address is checked here in the form a connection would use.
 */
export function parseDestination(raw: string, opts: { local: boolean }): ParsedDestination {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'invalid_url', detail: 'not an absolute URL' };
  }
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && opts.local))) {
    return { ok: false, reason: 'scheme_not_allowed', detail: `${url.protocol} (https only)` };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'credentials_in_url', detail: 'a user or password in the URL' };
  }
  const host = url.hostname;
  if (host === '') return { ok: false, reason: 'invalid_url', detail: 'no host' };
  const literal = parseIpv4(host) !== null || parseIpv6(host) !== null ? host.replace(/^\[|\]$/g, '') : null;
  if (literal !== null) {
    const c = classifyAddress(literal) as Classification;
    if (!addressAllowed(c, opts.local)) {
      return { ok: false, reason: 'address_refused', detail: `${literal} (${(c as { category: string }).category})` };
    }
  } else {
    const name = host.toLowerCase().replace(/\.$/, '');
    if (!opts.local && (name === 'localhost' || name.endsWith('.localhost'))) {
      return { ok: false, reason: 'address_refused', detail: `${name} (loopback)` };
    }
  }
  // a public name can still point at a service of ours that is not a web server (the database's
  // pooler, a mail relay): a deployment sends only to the ports receivers use (the URL parser
  // drops an explicit 443); the local stack's receivers listen on any port
  if (!opts.local && url.port !== '' && !WEBHOOK_PORTS.includes(url.port)) {
    return { ok: false, reason: 'port_not_allowed', detail: `port ${url.port} (443 or 8443 only)` };
  }
  return { ok: true, url, literal };
}

/**
 * Everything a delivery checks before it connects: the URL's rules, then every address its host
 * resolves to (one refused address refuses the whole destination: the connection could use any).
 */
export async function checkDestination(
  raw: string,
  resolver: Resolver,
  opts: { local: boolean },
): Promise<DestinationCheck> {
  const parsed = parseDestination(raw, opts);
  if (!parsed.ok) return parsed;
  if (parsed.literal !== null) return { ok: true, url: parsed.url, addresses: [parsed.literal] };
  let addresses: string[];
  try {
    addresses = await resolver(parsed.url.hostname);
  } catch (err) {
    return { ok: false, reason: 'dns_failed', detail: err instanceof Error ? err.name : 'resolver failed' };
  }
  if (addresses.length === 0) return { ok: false, reason: 'dns_failed', detail: 'no address' };
  for (const address of addresses) {
    const c = classifyAddress(address);
    if (c === null) return { ok: false, reason: 'dns_failed', detail: 'the resolver returned a non-address' };
    if (!addressAllowed(c, opts.local)) {
      return { ok: false, reason: 'address_refused', detail: `${address} (${(c as { category: string }).category})` };
    }
  }
  return { ok: true, url: parsed.url, addresses };
}

type DenoDns = { resolveDns(name: string, type: 'A' | 'AAAA'): Promise<string[]> };

/**
 * The production resolver: A and AAAA records through Deno.resolveDns. One type failing is fine when
 * the other answers (many hosts have no AAAA); both failing is a DNS failure.
 */
export const denoResolver: Resolver = async (host) => {
  const deno = (globalThis as { Deno?: DenoDns }).Deno;
  if (!deno) throw new Error('no resolver: Deno.resolveDns is missing (pass one)');
  const [a, aaaa] = await Promise.allSettled([deno.resolveDns(host, 'A'), deno.resolveDns(host, 'AAAA')]);
  if (a.status === 'rejected' && aaaa.status === 'rejected') throw a.reason;
  return [...(a.status === 'fulfilled' ? a.value : []), ...(aaaa.status === 'fulfilled' ? aaaa.value : [])];
};
