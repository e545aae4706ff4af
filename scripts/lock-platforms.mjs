// npm's registry mirror here only serves the linux-x64 builds of deno and the supabase CLI, so
// `npm install` leaves the other platforms' optional packages out of package-lock.json, and
// `npm ci` then refuses the lock file as out of sync. This adds a lock entry (version, os, cpu,
// optional) for each missing platform package; npm ci skips them on a non-matching platform.
// Run after `npm install` changes the lock file: node scripts/lock-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const pkgs = lock.packages;
const platform = (name) => {
  const n = name.replace(/^@[^/]+\//, '');
  const os = /darwin/.test(n) ? 'darwin' : /win32|windows/.test(n) ? 'win32' : 'linux';
  const cpu = /arm64/.test(n) ? 'arm64' : 'x64';
  const entry = { os: [os], cpu: [cpu] };
  if (/musl/.test(n)) entry.libc = ['musl'];
  else if (/glibc/.test(n)) entry.libc = ['glibc'];
  return entry;
};
let added = 0;
for (const [path, meta] of Object.entries(pkgs)) {
  if (!path.startsWith('node_modules/') || !meta.optionalDependencies) continue;
  for (const [dep, version] of Object.entries(meta.optionalDependencies)) {
    const key = `node_modules/${dep}`;
    if (pkgs[key]) continue;
    pkgs[key] = { version, ...platform(dep), dev: meta.dev || undefined, optional: true };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
console.log(`lock-platforms: added ${added} platform entries`);
