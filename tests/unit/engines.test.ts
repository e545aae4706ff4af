// `npm ci` on the machines this runs on (Node 20.x, package.json's engines) must not warn
// EBADENGINE: every installed package's declared Node version has to admit the one we declare.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));

/** The lowest Node version a ">=x.y.z" range admits, as [major, minor]; null for other shapes. */
function floor(range: string): [number, number] | null {
  const m = /^\s*>=\s*v?(\d+)(?:\.(\d+))?/.exec(range);
  return m ? [Number(m[1]), Number(m[2] ?? 0)] : null;
}

describe('engines', () => {
  it('every package npm ci installs admits the Node version package.json declares', () => {
    const declared = floor(read('package.json').engines.node as string);
    expect(declared).not.toBeNull();
    const [major, minor] = declared as [number, number];
    const lock = read('package-lock.json') as { packages: Record<string, { engines?: { node?: string } }> };
    const stricter = Object.entries(lock.packages).flatMap(([path, pkg]) => {
      const wants = pkg.engines?.node ? floor(pkg.engines.node) : null;
      if (!wants) return [];
      const [wMajor, wMinor] = wants;
      return wMajor > major || (wMajor === major && wMinor > minor) ? [`${path}: node ${pkg.engines?.node}`] : [];
    });
    expect(stricter).toEqual([]);
  });
});
