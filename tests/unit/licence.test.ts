// The project is Apache-2.0: the licence text at the root and the same identifier in every package.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

function packageFiles(dir: string): string[] {
  return readdirSync(`${root}${dir}`).flatMap((name) => {
    if (['node_modules', '.git', '.data', '.local', 'dist'].includes(name)) return [];
    const path = dir ? `${dir}/${name}` : name;
    if (statSync(`${root}${path}`).isDirectory()) return packageFiles(path);
    return name === 'package.json' ? [path] : [];
  });
}

describe('licence', () => {
  it('LICENSE holds the Apache License 2.0', () => {
    const text = readFileSync(`${root}LICENSE`, 'utf8');
    expect(text).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(text).toContain('TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION');
    expect(text).toContain('END OF TERMS AND CONDITIONS');
  });

  it('every package.json says "license": "Apache-2.0"', () => {
    const files = packageFiles('');
    expect(files).toContain('package.json');
    expect(files).toContain('clients/typescript/package.json');
    const wrong = files.filter((f) =>
      (JSON.parse(readFileSync(`${root}${f}`, 'utf8')) as { license?: string }).license !== 'Apache-2.0'
    );
    expect(wrong, 'set "license": "Apache-2.0" in each').toEqual([]);
  });
});
