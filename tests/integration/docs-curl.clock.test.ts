// The docs' curl walkthroughs, run as written. Every ```sh block that contains `curl`, in README.md
// and docs/*.md, is run in bash, in the newcomer's order: README.md, docs/money.md, docs/escrow.md
// (one continuous session: the later blocks use the variables the earlier ones set), then the
// other walkthroughs in the order of the README's contents (conversations, reviews, disputes, kyc),
// then any other doc with such a block, alphabetically. All blocks run in one bash process, as a
// reader pasting them into one shell would, from the repository's folder.
//
// The stack: its own, started as `npm start` starts it (startServerOnFreePorts of tests/support/ports.ts:
// scripts/start.ts --fresh, with --no-jobs so that nothing but the blocks moves time), with the
// sandbox payments, KYC and identity providers, the SMS outbox and the published local secrets the
// docs are written for. The suites' test stack runs the Paystack and KYC fakes and test secrets
// instead, which the docs do not describe. Ports: two the system chose; data in a temporary folder,
// removed after.
// It is a clock suite (tests/README.md) because blocks run jobs-run; the job acts on this stack's
// own database only, and a clock suite runs alone, so the timings are those of a quiet machine.
//
// What is substituted, nothing else: the base URL's port (54321) and the database port (54322) in
// the blocks' text. The bash environment has PG_PORT (for scripts/sms-code.ts and `npm run
// admin:grant`) and no DATABASE_URL. Phone numbers are not substituted: the database is new each
// run, and every walkthrough uses its own numbers (fixed ones in the newcomer's path, random ones in
// the others).
//
// Skipped: a block whose first line is `# only if you arrive here directly ...`, the set-up for a
// reader who starts in the middle of the path (the continuous run has what it sets already).
//
// What fails the test, naming the doc, its block (the n-th ```sh block of that file, its line) and
// the command (its lines):
// - a command that exits with an error (bash runs with errexit), or the run not ending in 120 s; a
//   curl that ends by its own --max-time (a live stream the reader watches for a few seconds) has
//   not failed;
// - an answer whose envelope says success:false, unless the comment right under the command shows
//   that error (`# {"success":false,"status":409,...}`): that comment is the mark of a deliberate
//   error;
// - an answer that differs from the envelope the comment under its command shows: the comment's
//   text, its lines joined, must appear in the answer piece by piece, in order, where `...` or `…`
//   stands for anything (with neither, it must be the answer), white space aside;
// - such an envelope comment under a command that made no curl call, unless the command is
//   `echo "$ANSWER"`: then it is compared with the block's previous answer (`ANSWER=$(curl ...)`
//   above it);
// - a command's output that differs from the plain value the comment right under it shows. A
//   comment line right under a command (no blank line between) that is not an envelope and is one
//   word, e.g. `# 446.25` or `# active` under `curl ... | field balance`, is what the command prints
//   on stdout: the two, trimmed, must be equal (or match as above when the value has `...` or `…`).
//   A comment line that is a lone `{` or `[` starts a value printed over several lines (`field`
//   on an object, as node prints it), which ends at the comment line that is a lone `}` or `]`; it
//   is compared as an envelope is. A comment with spaces is prose about what comes next, never a
//   value. To record the output, such a command runs as `__out=$(command` with `); __printed ...`
//   in place of the comment (every line keeps its number), so it runs in a subshell: it may not
//   set variables the later blocks use.
// Every curl call goes through a bash function that records its answer and the line of the block's
// command it belongs to (for a call inside a function the block defines, the line that calls it).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmStartEnv } from '../support/stack.ts';
import { startServerOnFreePorts } from '../support/ports.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const LOCAL_BASE = 'http://127.0.0.1:54321';
const LOCAL_PG = '127.0.0.1:54322';
const ORDER = [
  'README.md',
  'docs/money.md',
  'docs/escrow.md',
  'docs/conversations.md',
  'docs/events.md',
  'docs/reviews.md',
  'docs/disputes.md',
  'docs/kyc.md',
];
const DIRECT = /^# only if you arrive here directly/;
const RUN_TIMEOUT_MS = 120_000;

interface Block {
  doc: string;
  /** 1-based among the doc's ```sh blocks */
  n: number;
  /** the doc's line of the block's first code line */
  line: number;
  code: string;
  /** the file it runs from */
  file: string;
}

/**
 * A command of a block: its lines (1-based in the block), and what the comment right under it
 * shows: an answer envelope (`shows`), or the value the command prints (`prints`).
 */
interface Command {
  from: number;
  to: number;
  shows?: string;
  prints?: string;
}

/** Every ```sh block of a doc, with its position. */
function shBlocks(doc: string): Omit<Block, 'file'>[] {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  const out: Omit<Block, 'file'>[] = [];
  let n = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${doc}:${i + 1}: a \`\`\`sh block that never ends`);
    n++;
    out.push({ doc, n, line: i + 2, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return out;
}

/** The docs with curl blocks, in the newcomer's order. */
function docsInOrder(): string[] {
  const all = [
    'README.md',
    ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ];
  const withCurl = all.filter((d) => shBlocks(d).some((b) => /\bcurl\b/.test(b.code)));
  const rest = withCurl.filter((d) => !ORDER.includes(d)).sort();
  return [...ORDER.filter((d) => withCurl.includes(d)), ...rest];
}

/**
 * Splits a block into commands: a command goes on while a line ends with a backslash, a quote or a
 * parenthesis is open, or a function body `{` is open. Comment lines right after a command that
 * start with `{"success":` (and their continuation lines) are the answer it shows. Otherwise a
 * comment line right after it that is one word (`# 446.25`, `# active`) is the value it prints;
 * a lone `{` or `[` starts a value printed over several lines (node's inspection of an object),
 * which goes on to the comment line that is a lone `}` or `]`.
 */
function commands(code: string): Command[] {
  const lines = code.split('\n');
  const out: Command[] = [];
  let i = 0;
  while (i < lines.length) {
    const text = lines[i] as string;
    if (text.trim() === '' || text.trimStart().startsWith('#')) {
      i++;
      continue;
    }
    const from = i + 1;
    let single = false;
    let double = false;
    let parens = 0;
    let braces = 0;
    for (;;) {
      const line = lines[i] as string;
      for (let c = 0; c < line.length; c++) {
        const ch = line[c];
        if (single) {
          if (ch === "'") single = false;
        } else if (ch === '\\') c++;
        else if (ch === '"') double = !double;
        else if (double) {
          if (ch === '$' && line[c + 1] === '(') parens++, c++;
          else if (ch === ')' && parens > 0) parens--;
        } else if (ch === "'") single = true;
        else if (ch === '#' && (c === 0 || /\s/.test(line[c - 1] as string))) break;
        else if (ch === '(') parens++;
        else if (ch === ')') parens--;
      }
      const trimmed = line.trim();
      if (/\{$/.test(trimmed) && !double && !single) braces++;
      if (/^\}/.test(trimmed) && braces > 0) braces--;
      const open = single || double || parens > 0 || braces > 0 || /\\$/.test(line);
      i++;
      if (!open || i >= lines.length) break;
    }
    const command: Command = { from, to: i };
    if ((lines[i] ?? '').startsWith('# {"success":')) {
      const shown: string[] = [];
      while (i < lines.length && (lines[i] as string).startsWith('#') && !/^#\s*$/.test(lines[i] as string)) {
        const l = (lines[i] as string).replace(/^#\s?/, '');
        if (shown.length > 0 && /^\S/.test(l)) break; // a new comment, not the answer going on
        shown.push(l.trim());
        i++;
      }
      command.shows = shown.join('');
    } else if (/^# \S+$/.test(lines[i] ?? '')) {
      const first = (lines[i] as string).slice(2);
      const close = first === '{' ? '# }' : first === '[' ? '# ]' : undefined;
      const end = close === undefined ? i : lines.indexOf(close, i + 1);
      if (end >= 0 && lines.slice(i, end + 1).every((l) => l.startsWith('#'))) {
        command.prints = lines.slice(i, end + 1).map((l) => l.slice(2)).join('\n');
      }
    }
    out.push(command);
  }
  return out;
}

/**
 * Does the answer read as the shown one, where `...` and `…` stand for anything? White space is
 * left out of both (a comment wraps its lines where it likes).
 */
function matches(shownText: string, answerText: string): boolean {
  const shown = shownText.replace(/\s+/g, '');
  const answer = answerText.replace(/\s+/g, '');
  const pieces = shown.split(/\.\.\.|…/);
  if (pieces.length === 1) return shown === answer;
  let at = 0;
  for (const [k, piece] of pieces.entries()) {
    if (piece === '') continue;
    const found = answer.indexOf(piece, at);
    if (found < 0 || (k === 0 && found !== 0)) return false;
    at = found + piece.length;
  }
  const last = pieces[pieces.length - 1] as string;
  return last === '' || answer.endsWith(last);
}

const where = (b: Block, c?: Command) =>
  `${b.doc}, block ${b.n} (line ${b.line})${c ? `, the command at line ${b.line + c.from - 1}` : ''}`;
const commandText = (b: Block, c: Command) => b.code.split('\n').slice(c.from - 1, c.to).join('\n');

/**
 * The block as it runs: a command that shows the value it prints runs as `__out=$(command` with
 * `); __printed <its first line> "$__out"` in place of the comment line under it, so that every
 * line keeps its number; __printed records the output and prints it.
 */
function runnable(code: string): string {
  const lines = code.split('\n');
  for (const c of commands(code)) {
    if (c.prints === undefined) continue;
    lines[c.from - 1] = `__out=$(${lines[c.from - 1]}`;
    lines[c.to] = `); __printed ${c.from} "$__out"`;
  }
  return lines.join('\n');
}

/** The value a command printed reads as the one shown: `...` or `…` stand for anything, as in matches. */
function printedMatches(shown: string, printed: string): boolean {
  return /\.\.\.|…/.test(shown) ? matches(shown, printed) : shown.trim() === printed.trim();
}

const DRIVER = String.raw`
set -eE
shopt -s inherit_errexit
__log() { printf '%s\n' "$1" >> "$DOCS_CURL_LOG"; }
curl() {
  local __i __src='?' __line='?' __out __rc
  for ((__i = 0; __i < ${'$'}{#BASH_SOURCE[@]} - 1; __i++)); do
    if [[ ${'$'}{BASH_SOURCE[__i + 1]} == *.block.sh ]]; then
      __src=${'$'}{BASH_SOURCE[__i + 1]##*/}
      __line=${'$'}{BASH_LINENO[__i]}
    fi
  done
  __out=$(__rc=0; command curl --max-time 20 "$@" || __rc=$?; printf x; exit $__rc) && __rc=0 || __rc=$?
  __out=${'$'}{__out%x}
  __log "CURL ${'$'}__src ${'$'}__line ${'$'}__rc $(printf '%s' "$__out" | base64 -w0)"
  printf '%s' "$__out"
  # a stream the command cuts short with its own --max-time has done what it was asked
  if ((__rc == 28)) && [[ " $* " == *" --max-time "* ]]; then return 0; fi
  return $__rc
}
__printed() {
  __log "OUT ${'$'}{BASH_SOURCE[1]##*/} $1 $(printf '%s' "$2" | base64 -w0)"
  printf '%s\n' "$2"
}
trap '__log "ERR ${'$'}{BASH_SOURCE[0]##*/} $LINENO $?"' ERR
for __f in "$@"; do
  __log "BEGIN ${'$'}{__f##*/}"
  source "$__f"
done
__log END
`;

interface Call {
  file: string;
  line: number;
  rc: number;
  answer: string;
}

let stack: { base: string; pgPort: number; stop(): Promise<void> } | undefined;
let dataDir = '';

async function startDocsStack(): Promise<NonNullable<typeof stack>> {
  dataDir = mkdtempSync(join(tmpdir(), 'docs-curl-pg-'));
  let output = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      output += chunk.toString();
      done();
    },
  });
  sink.on('error', () => {}); // output after the server's stderr ended it: not needed
  const { server, httpPort, pgPort } = await startServerOnFreePorts({
    env: (httpPort, pgPort) => npmStartEnv(httpPort, pgPort, dataDir),
    out: sink,
    timeoutMs: 60_000,
    failure: (why) => new Error(`the docs' stack ${why}:\n${output}`),
  });
  return { base: `http://127.0.0.1:${httpPort}`, pgPort, stop: () => server.stop() };
}

describe("the docs' curl walkthroughs", () => {
  beforeAll(async () => {
    stack = await startDocsStack();
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('the commands and answers the README and docs/*.md show are what the server does', async () => {
    const s = stack as NonNullable<typeof stack>;
    const work = mkdtempSync(join(tmpdir(), 'docs-curl-'));
    try {
      const blocks: Block[] = [];
      for (const doc of docsInOrder()) {
        for (const b of shBlocks(doc)) {
          if (!/\bcurl\b/.test(b.code) || DIRECT.test(b.code)) continue;
          const file = join(
            work,
            `${String(blocks.length + 1).padStart(2, '0')}-${doc.replace(/\W/g, '_')}-${b.n}.block.sh`,
          );
          blocks.push({ ...b, file });
          writeFileSync(
            file,
            `${runnable(b.code).replaceAll(LOCAL_BASE, s.base).replaceAll(LOCAL_PG, `127.0.0.1:${s.pgPort}`)}\n`,
          );
        }
      }
      expect([...new Set(blocks.map((b) => b.doc))].slice(0, 3), 'the newcomer path: README, money, escrow').toEqual([
        'README.md',
        'docs/money.md',
        'docs/escrow.md',
      ]);
      const log = join(work, 'calls.log');
      writeFileSync(log, '');
      writeFileSync(join(work, 'driver.sh'), DRIVER);
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? root,
        LANG: 'C.UTF-8',
        LC_ALL: 'C.UTF-8',
        PG_PORT: String(s.pgPort),
        DOCS_CURL_LOG: log,
      };
      const run = await new Promise<{ code: number | null; output: string; timedOut: boolean }>((resolve) => {
        const bash = spawn('bash', [join(work, 'driver.sh'), ...blocks.map((b) => b.file)], {
          cwd: root,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
        let output = '';
        bash.stdout?.on('data', (c: Buffer) => (output += c.toString()));
        bash.stderr?.on('data', (c: Buffer) => (output += c.toString()));
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          try {
            process.kill(-(bash.pid as number), 'SIGKILL');
          } catch { /* gone */ }
        }, RUN_TIMEOUT_MS);
        bash.once('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, output, timedOut });
        });
      });

      const byFile = new Map(blocks.map((b) => [b.file.slice(work.length + 1), b]));
      const cmds = new Map(blocks.map((b) => [b, commands(b.code)]));
      // a command that shows what it prints ends, as it runs, on the line under it (runnable)
      const commandAt = (b: Block, line: number) =>
        cmds.get(b)?.find((c) => c.from <= line && line <= c.to + (c.prints === undefined ? 0 : 1));
      const problems: string[] = [];
      const calls: Call[] = [];
      const printed = new Map<Command, string>();
      let current: Block | undefined;
      let lastCall: Call | undefined;
      let finished = false;
      let pendingErr: { block: Block | undefined; text: string } | undefined;
      for (const entry of readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
        const [kind, file = '', line = '', rc = '', body = ''] = entry.split(' ');
        if (kind === 'BEGIN') current = byFile.get(file);
        if (kind === 'END') finished = true;
        if (kind === 'CURL') {
          lastCall = { file, line: Number(line), rc: Number(rc), answer: Buffer.from(body, 'base64').toString('utf8') };
          calls.push(lastCall);
        }
        if (kind === 'OUT') {
          const b = byFile.get(file);
          const c = b && cmds.get(b)?.find((k) => k.from === Number(line));
          if (c) printed.set(c, Buffer.from(rc, 'base64').toString('utf8'));
        }
        if (kind === 'ERR') {
          const b = byFile.get(file);
          const c = b && commandAt(b, Number(line));
          if (b && c) {
            // the error of a command inside a function (a helper's, or a line of a command
            // substitution) is reported once, as the block's command that ran it
            if (pendingErr?.block === current) pendingErr = undefined;
            problems.push(`${where(b, c)} failed (exit ${rc}):\n${commandText(b, c)}`);
          } else {
            if (pendingErr) problems.push(pendingErr.text);
            pendingErr = {
              block: current,
              text: `a command failed (exit ${rc}) at ${file}:${line}, while running ${
                current ? where(current) : 'nothing'
              }`,
            };
          }
        }
      }
      if (pendingErr) problems.push(pendingErr.text);
      const checked = new Set<Command>();
      for (const call of calls) {
        const b = byFile.get(call.file);
        if (!b) continue;
        const c = commandAt(b, call.line);
        const what = c ? `${where(b, c)}:\n${commandText(b, c)}` : `${where(b)}, line ${call.line}`;
        // a stream that the command itself cuts short (its own --max-time: curl exits 28) ran as written
        const cutShort = call.rc === 28 && c !== undefined && /\s--max-time\s/.test(commandText(b, c));
        if (call.rc !== 0 && !cutShort) problems.push(`curl exited with ${call.rc} at ${what}`);
        if (c?.shows !== undefined) {
          checked.add(c);
          if (!matches(c.shows, call.answer)) {
            problems.push(`${what}\nanswered\n  ${call.answer}\nbut the doc shows\n  ${c.shows}`);
          }
        } else if (/^\s*\{"success":false/.test(call.answer)) {
          problems.push(`${what}\nanswered an error the doc does not show:\n  ${call.answer}`);
        }
      }
      // `echo "$ANSWER"` under `ANSWER=$(curl ...)`: the comment shows the block's previous answer
      for (const b of blocks) {
        const own = calls.filter((k) => byFile.get(k.file) === b);
        if (own.length === 0 || !finished) continue; // an earlier failure stopped the run, and is reported
        for (const c of cmds.get(b) ?? []) {
          if (c.shows === undefined || checked.has(c)) continue;
          const previous = own.filter((k) => k.line < c.from).at(-1);
          const what = `${where(b, c)}:\n${commandText(b, c)}`;
          if (!/^echo\b/.test(commandText(b, c)) || !previous) {
            problems.push(`${what}\nshows an answer, but makes no curl call and echoes none`);
          } else if (!matches(c.shows, previous.answer)) {
            problems.push(`${what}\nechoes\n  ${previous.answer}\nbut the doc shows\n  ${c.shows}`);
          }
        }
      }
      // a one-word comment (or a lone { ... }) under a command: what the command prints
      for (const b of blocks) {
        for (const c of cmds.get(b) ?? []) {
          if (c.prints === undefined) continue;
          const out = printed.get(c);
          const what = `${where(b, c)}:\n${commandText(b, c)}`;
          if (out === undefined) {
            if (finished) problems.push(`${what}\nshows what it prints, but never ran`);
          } else if (!printedMatches(c.prints, out)) {
            problems.push(`${what}\nprinted\n  ${out}\nbut the doc shows\n  ${c.prints}`);
          }
        }
      }
      if (run.timedOut) {
        const at = lastCall && byFile.get(lastCall.file);
        problems.push(
          `the blocks did not finish in ${RUN_TIMEOUT_MS / 1000} s; the last curl call: ${
            at ? where(at, commandAt(at, lastCall?.line ?? 0)) : 'none'
          }`,
        );
      } else if (run.code !== 0 && problems.length === 0) {
        problems.push(`bash exited with ${run.code}`);
      }
      expect([...new Set(problems)], `bash output:\n${run.output.slice(-3000)}`).toEqual([]);
      expect(calls.length).toBeGreaterThan(50);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 180_000);
});
