// The files `supabase functions deploy` uploads for one entry, found the way the Supabase CLI finds
// them (2.x Go source and 3.x alike, internal/functions/deploy: walkImportPaths): each file is read
// as text, one regular expression picks its import and export specifiers (comments included), the
// import map's keys are replaced by their values as prefixes, and a specifier is followed when it
// is then a relative path (./ or ../) with a file extension. Nothing else is uploaded, except the
// import map itself. Runs under Deno (scripts/deploy-check.ts) and Node (tests/unit/clock-group).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';

// The CLI's importPathPattern, with its (?i) flag; braces escaped for JavaScript.
const IMPORT_PATH = /(?:import|export)\s+(?:\{[^{}]+\}|.*?)\s*(?:from)?\s*['"](.*?)['"]|import\(\s*['"](.*?)['"]\)/gi;

/** Every specifier the CLI's pattern finds in a source text, in order. */
export function importSpecifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT_PATH)) {
    const spec = (m[1] || m[2] || '').trim();
    if (spec) out.push(spec);
  }
  return out;
}

export interface Walk {
  /** Files the CLI would upload for the entry (the entry included), relative to the root, sorted. */
  files: string[];
  /** Relative imports whose file does not exist (the CLI only warns; the function then fails). */
  missing: { from: string; specifier: string }[];
  /** Relative imports that leave the root folder (the CLI cannot upload them). */
  outside: { from: string; specifier: string }[];
}

/**
 * The CLI's walk from `entry` (a path relative to `root`, with forward slashes). `imports` is the
 * import map's "imports" object; its values that are not paths (npm:...) are not followed.
 */
export function walkImports(root: string, entry: string, imports: Record<string, string> = {}): Walk {
  const seen = new Set<string>();
  const missing: Walk['missing'] = [];
  const outside: Walk['outside'] = [];
  const queue = [posix.normalize(entry)];
  while (queue.length > 0) {
    const current = queue.pop() as string;
    if (seen.has(current)) continue;
    const file = posix.join(root, current);
    if (!existsSync(file) || !statSync(file).isFile()) continue; // reported by the importer below
    seen.add(current);
    for (const specifier of importSpecifiers(readFileSync(file, 'utf8'))) {
      let mod = specifier;
      for (const [key, value] of Object.entries(imports)) {
        if (mod.startsWith(key)) mod = value + mod.slice(key.length);
      }
      if (!mod.startsWith('./') && !mod.startsWith('../')) continue;
      const target = posix.normalize(posix.join(posix.dirname(current), mod));
      if (posix.extname(target) === '') continue;
      if (target.startsWith('../')) outside.push({ from: current, specifier });
      else if (!existsSync(posix.join(root, target))) missing.push({ from: current, specifier });
      else queue.push(target);
    }
  }
  return { files: [...seen].sort(), missing, outside };
}
