// docs/compliance.md's retention table, rendered from shared/compliance/retention.ts between the
// retention markers (`npm run gen`; `npm run gen -- --check` fails when it is stale).
import { NO_PERSONAL_DATA, PURGE_BATCH, RETENTION, type RetentionEntry } from '../../../shared/compliance/retention.ts';

export const RETENTION_START = '<!-- retention:start -->';
export const RETENTION_END = '<!-- retention:end -->';

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function purgeCell(e: RetentionEntry): string {
  if (e.purges.length === 0) return `never (kept ${e.kept ?? 'for good'})`;
  return e.purges.map((p) => `${p.after} after ${p.from}: ${p.does}`).join('; ');
}

/** One row per store, then the tables that hold no personal data. */
export function retentionTable(): string {
  const rows = RETENTION.map((e) => {
    const tables = e.tables.length > 0 ? e.tables.map((t) => `\`${t}\``).join(', ') : '(not in the database)';
    return `| ${cell(e.store)} | ${tables} | ${cell(e.personal)} | **${e.onDelete}**: ${cell(e.deletion)} | ${
      cell(purgeCell(e))
    } | ${e.basis.join(', ')}: ${cell(e.why)} |`;
  });
  const none = Object.entries(NO_PERSONAL_DATA).map(([t, why]) => `| \`${t}\` | ${cell(why)} |`);
  return [
    '| Store | Tables | Personal data | On account deletion | Purged by the job | Legal basis |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Each run of the job erases or deletes at most ${PURGE_BATCH} rows of each kind (\`PURGE_BATCH\`).`,
    '',
    'Tables that hold no personal data:',
    '',
    '| Table | Why |',
    '|---|---|',
    ...none,
  ].join('\n');
}
