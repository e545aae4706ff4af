// Self-contained docs (docs/decisions.md#self-contained-documentation): no comment or doc of the
// repository cites a file outside it, an issue number or a person's role; a path it names exists;
// a `docs/<file>.md#<anchor>` citation names a heading that exists. tests/unit/citations.test.ts
// applies these checks to every file the repository holds. They are pure (the repository is passed
// in), so the same test also shows each rule firing on a small sample.
import ts from 'typescript';

/** What the checks need to know about the repository. */
export interface Repo {
  /** Every file, as a path from the repository's root ('docs/kyc.md'), directories excluded. */
  files: readonly string[];
  /** The text of one of `files` (read for the headings of a cited Markdown file). */
  read(path: string): string;
  /** Folders kept out of git (.gitignore: 'clients/typescript/dist/'): they exist once built or run. */
  ignored?: readonly string[];
}

export type Rule = 'outside-file' | 'issue-number' | 'role' | 'missing-path' | 'missing-anchor';

export interface Finding {
  line: number;
  rule: Rule;
  /** What was found, as written. */
  found: string;
  /** What to do about it. */
  fix: string;
}

/** File kinds whose comments (code) or whole text (docs, config) are checked. */
export const CHECKED_KINDS = ['.ts', '.mjs', '.js', '.md', '.sh', '.toml', '.json', '.sql', '.html', '.yml'];

/** Files never checked, each with the reason. */
export const EXEMPT: readonly { pattern: RegExp; why: string }[] = [
  { pattern: /^supabase\/migrations\/.*\.sql$/, why: 'applied migrations: their text never changes' },
  { pattern: /^supabase\/schema\.sql$/, why: 'generated from the database, kept byte-identical' },
  { pattern: /(^|\/)package-lock\.json$/, why: 'written by npm' },
  { pattern: /^docs\/api\/swagger-ui-bundle\.js$/, why: 'copied verbatim from the npm package swagger-ui-dist' },
];

const CODE_KINDS = ['.ts', '.mjs', '.js'];
const ROOTS = ['shared', 'scripts', 'tests', 'docs', 'supabase', 'clients'];

const FIX = {
  outside: "write what it relied on into docs/*.md in the project's own words and cite docs/<file>.md#<section>",
  issue: 'drop the issue number and say what the decision is (or cite the docs/*.md section that records it)',
  role: 'state the decision itself instead of who asked for it (docs/decisions.md records decisions)',
};

/** The rules that need only the text of a line: a pattern, the rule it breaks and what to do. */
const LINE_RULES: readonly { pattern: RegExp; rule: Rule; fix: string }[] = [
  // The external design file, by name or by its numbered sections.
  { pattern: /\bDESIGN\b(?:\.md)?|§\s*\d[\d.]*/g, rule: 'outside-file', fix: FIX.outside },
  {
    pattern: /\b(?:spec\/)?escrow-service-interface\.md\b|\bSQL-FOR-MERGE\b(?:\.md)?/g,
    rule: 'outside-file',
    fix: FIX.outside,
  },
  // "issue <n>", "issues <n> and <m>", "Issue #<n>"
  { pattern: /\bissues?\s+#?\d+(?:(?:\s*,\s*|\s+and\s+|\s*&\s*)#?\d+)*/gi, rule: 'issue-number', fix: FIX.issue },
  // "#<n>" on its own: not a heading ("# x"), a shebang, an anchor ("x.md#a"), an entity, a colour, or
  // another project's issue named with its repository ("owner/repo#<n>").
  { pattern: /(?<![\w&#/.:"'=-])(?<!:\s+)#\d+(?![\w-])/g, rule: 'issue-number', fix: FIX.issue },
  { pattern: /\bCEO\b|\bdesign card\b/g, rule: 'role', fix: FIX.role },
  {
    pattern:
      /\b(?:the\s+|a\s+)?code reviewer\b|\bthe reviewer\s+(?:asked|asks|said|says|wants|wanted|requested|noted|found|flagged|pointed out|insisted|suggested|objected|prefers|preferred|required|demanded)\b/gi,
    rule: 'role',
    fix: FIX.role,
  },
];

/** A path that climbs out of its folder ('../x', '../../shared/'). */
const RELATIVE_PATH = /(?<![\w./-])(?:\.\.\/)+[\w.\-/<>*]*/g;
/** A path from the repository's root ('shared/core/db.ts', 'docs/kyc.md#endpoints', 'tests/', 'README.md'). */
const ROOT_PATH = new RegExp(
  `(?<![\\w./@~$%-])(?:(?:${ROOTS.join('|')})/[\\w.\\-/<>*]*|README\\.md)(?:#[\\w-]+)?`,
  'g',
);
/** A Markdown link to a file of the repository or a heading: '[x](kyc.md#endpoints)', '[x](#endpoints)'. */
const MARKDOWN_LINK = /\]\((?![a-z]+:)([^)\s#]*)(?:#([^)\s]*))?\)/g;

/** Whether `path` is checked at all, and how: only its comments (code), or its whole text. */
export function checkedAs(path: string): 'comments' | 'text' | undefined {
  const kind = CHECKED_KINDS.find((k) => path.endsWith(k));
  if (!kind || EXEMPT.some((e) => e.pattern.test(path))) return undefined;
  return CODE_KINDS.includes(kind) ? 'comments' : 'text';
}

/**
 * The comments of a TypeScript or JavaScript file as TypeScript's parser finds them, everything
 * else blanked to spaces (line breaks kept), so line numbers and columns stay those of the file.
 */
export function commentsOnly(path: string, text: string): string {
  const kind = path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const keep = new Uint8Array(text.length);
  const mark = (ranges: ts.CommentRange[] | undefined) => ranges?.forEach((r) => keep.fill(1, r.pos, r.end));
  const visit = (node: ts.Node) => {
    mark(ts.getLeadingCommentRanges(text, node.getFullStart()));
    mark(ts.getTrailingCommentRanges(text, node.getEnd()));
    node.getChildren(file).forEach(visit);
  };
  visit(file);
  return text.replace(/[^\n]/g, (c, i: number) => (keep[i] ? c : ' '));
}

/** GitHub's anchors of a Markdown text's headings ('## 8.4 KYC tiers' gives '84-kyc-tiers'). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = (heading[1] as string)
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** `path` with `.` and `..` segments resolved; undefined when it climbs out of the root. */
function normalise(path: string): string | undefined {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else if (part !== '.') out.push(part);
  }
  return out.join('/');
}

/** Whether a path named in a text (maybe a glob or a `<placeholder>`) names something in `repo`. */
function pathExists(repo: Repo, path: string): boolean {
  if (repo.ignored?.some((folder) => path.startsWith(folder))) return true;
  if (/<[^>]*>/.test(path)) {
    // A placeholder: its fixed folder, up to the first <...>, must exist.
    const folder = path.slice(0, path.indexOf('<')).replace(/[^/]*$/, '');
    return folder === '' || repo.files.some((f) => f.startsWith(folder));
  }
  if (path.includes('*')) {
    const glob = path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*\*\/?|\*/g, (s) => s === '*' ? '[^/]*' : '.*');
    const re = new RegExp(`^${glob}${path.endsWith('/') ? '' : '$'}`);
    return repo.files.some((f) => re.test(f));
  }
  const folder = path.endsWith('/') ? path : `${path}/`;
  return repo.files.includes(path) || repo.files.some((f) => f.startsWith(folder));
}

/** A mention is a path when it ends with a slash, is a glob or placeholder, or has an extension. */
const looksLikePath = (p: string) => p.endsWith('/') || /[*<]/.test(p) || /\.[A-Za-z]\w*$/.test(p.replace(/.*\//, ''));

/** What is wrong with a path mention (`path` resolved from the repository's root), if anything. */
function checkPath(
  repo: Repo,
  mention: string,
  path: string,
  anchor?: string,
): Pick<Finding, 'rule' | 'fix'> | undefined {
  if (!pathExists(repo, path)) {
    return {
      rule: 'missing-path',
      fix: `${mention} does not exist in the repository: name the file's current path (or drop the mention)`,
    };
  }
  if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(repo.read(path)).has(anchor)) {
    return {
      rule: 'missing-anchor',
      fix: `${path} has no heading whose anchor is #${anchor}: cite a heading it has (GitHub-style anchor)`,
    };
  }
  return undefined;
}

/** Every finding in `text`, the content of `path` (a path from the repository's root). */
export function findings(repo: Repo, path: string, text: string): Finding[] {
  const how = checkedAs(path);
  if (!how) return [];
  const checked = how === 'comments' ? commentsOnly(path, text) : text;
  const folder = path.includes('/') ? path.replace(/\/[^/]*$/, '/') : '';
  const out: Finding[] = [];
  checked.split('\n').forEach((line, i) => {
    const add = (rule: Rule, found: string, fix: string) => out.push({ line: i + 1, rule, found, fix });
    for (const { pattern, rule, fix } of LINE_RULES) {
      for (const m of line.matchAll(pattern)) add(rule, m[0], fix);
    }
    for (const m of line.matchAll(RELATIVE_PATH)) {
      const cited = m[0].replace(/([^.])\.+$/, '$1'); // not the full stop of a sentence
      if (!looksLikePath(cited)) continue;
      const target = normalise(folder + cited); // from this file's folder
      const fromElsewhere = cited.replace(/^(\.\.\/)+/, ''); // as written in a code sample from another folder
      if ((target !== undefined && pathExists(repo, target)) || pathExists(repo, fromElsewhere)) continue;
      if (target === undefined) add('outside-file', cited, `climbs out of the repository: ${FIX.outside}`);
      else add('missing-path', cited, `${target} does not exist in the repository: name the file's current path`);
    }
    for (const m of line.matchAll(ROOT_PATH)) {
      const cited = m[0].replace(/\.+$/, '');
      const [mention, anchor] = cited.split('#') as [string, string | undefined];
      if (!looksLikePath(mention)) continue;
      const problem = checkPath(repo, mention, mention, anchor);
      if (problem) add(problem.rule, cited, problem.fix);
    }
    if (!path.endsWith('.md')) return;
    for (const m of line.matchAll(MARKDOWN_LINK)) {
      const [, file, anchor] = m as unknown as [string, string, string | undefined];
      const link = m[0].slice(2, -1); // what the link points at
      if (!file) {
        // a heading of this same text
        if (anchor !== undefined && !anchorsOf(text).has(anchor)) {
          add('missing-anchor', link, `${path} has no heading whose anchor is #${anchor}: link to a heading it has`);
        }
        continue;
      }
      const target = normalise(folder + file);
      if (target === undefined) continue; // a link out of the repository: RELATIVE_PATH reports it
      const problem = checkPath(repo, link, target, anchor);
      if (problem) add(problem.rule, link, problem.fix);
    }
  });
  return out;
}
