// Whether a database address is this machine: the guard of scripts/sms-code.ts, which reads
// one-time codes and must never read them from a deployed database.

/** The names of this machine a local database is reached on. */
export const LOCAL_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '::1'];

/**
 * The host postgres.js connects to for a postgres:// (or postgresql://) URL, found as postgres.js
 * finds it (node_modules/postgres/src/index.js, parseUrl), without an IPv6 address's brackets;
 * undefined when the URL is malformed, names no host (postgres.js would then take PGHOST) or
 * names several (a multi-host URL).
 */
export function databaseHost(url: string): string | undefined {
  if (!/^postgres(?:ql)?:\/\//i.test(url)) return undefined;
  let hosts: string;
  let hostname: string;
  try {
    const authority = decodeURIComponent(url.slice(url.indexOf('://') + 3).split(/[?/]/)[0] as string);
    hosts = authority.slice(authority.indexOf('@') + 1);
    hostname = new URL(url).hostname;
  } catch {
    return undefined;
  }
  if (hosts.includes(',')) return undefined;
  return hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase() || undefined;
}

/** Whether url names one host, and it is 127.0.0.1, localhost or ::1. */
export function isLocalDatabaseUrl(url: string): boolean {
  const host = databaseHost(url);
  return host !== undefined && LOCAL_HOSTS.includes(host);
}
