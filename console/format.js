// How the console writes money, times and waits: naira with kobo (₦1,234.50), times in
// Africa/Lagos whatever the browser's own zone, waits in days, hours and minutes.

const number = new Intl.NumberFormat('en-NG', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** An amount of the API (naira, up to 2 decimals) as ₦1,234.50; a negative one as −₦1,234.50. */
export function naira(amount) {
  if (amount === null || amount === undefined) return '—';
  const text = `₦${number.format(Math.abs(amount))}`;
  return amount < 0 ? `−${text}` : text;
}

/** A signed amount, for ledger entries: +₦1,234.50 or −₦1,234.50. */
export function signedNaira(amount) {
  return amount > 0 ? `+${naira(amount)}` : naira(amount);
}

const lagos = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Africa/Lagos',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** A timestamp of the API as a time in Lagos: "3 Dec 2026, 14:05:09 WAT". */
export function lagosTime(iso) {
  if (!iso) return '—';
  return `${lagos.format(new Date(iso))} WAT`;
}

/** A wait in seconds, in words: "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function age(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** The first 8 characters of an id, for tables (the whole id is in the link's title). */
export const shortId = (id) => (id ? id.slice(0, 8) : '—');

/** A status or kind as words: "disputes_escalated" -> "disputes escalated". */
export const words = (s) => (s ? String(s).replaceAll('_', ' ') : '—');
