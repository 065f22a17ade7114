/** How the console writes values: numbers in full (digit grouping, never "482K" nor an exponent). */
const full = new Intl.NumberFormat('en-US', { maximumFractionDigits: 20, useGrouping: true });

export const formatNumber = (n: number) => (Number.isFinite(n) ? full.format(n) : String(n));

export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 2) return 'just now';
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} days ago`;
}

// One formatter for every date: creating one per call costs more than the rest of a row's render.
const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });

export function absoluteTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function formatDuration(totalSeconds: number): string {
  const days = Math.floor(totalSeconds / 86400);
  const hours = Math.floor((totalSeconds % 86400) / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return [days ? `${days} d` : '', hours ? `${hours} h` : '', minutes ? `${minutes} min` : '', `${seconds} s`]
    .filter(Boolean)
    .join(' ');
}

/** `*` matches any run of characters, as in the hub's filters; case-insensitive for browsing. */
export function wildcard(pattern: string): (value: string) => boolean {
  const trimmed = pattern.trim();
  if (trimmed === '' || trimmed === '*') return () => true;
  const source = trimmed
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const regex = new RegExp(`^${source}$`, 'i');
  return (value) => regex.test(value);
}
