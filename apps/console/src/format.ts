const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const number = new Intl.NumberFormat();

export function formatDate(iso: string): string {
  return dateTime.format(new Date(iso));
}

export function formatNumber(n: number): string {
  return number.format(n);
}

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a UTC day, `offset` days from today. */
function utcDay(offset = 0, now = Date.now()): string {
  return new Date(now + offset * DAY_MS).toISOString().slice(0, 10);
}

/** The `count` UTC days ending today, oldest first. */
export function lastDays(count: number, now = Date.now()): string[] {
  return Array.from({ length: count }, (_, i) => utcDay(i - count + 1, now));
}
