// The time arguments of a range query, as the API documents them: `start` and
// `end` as UNIX time or `YYYY-MM-DDTHH:MM:SS`, `step` as a Prometheus duration.
// Each parser returns seconds, or null when the text is not of that form.

const UNIX = /^\d{1,12}(\.\d{1,9})?$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * UNIX seconds (fractions allowed), or `YYYY-MM-DDTHH:MM:SS` with optional
 * fraction and zone; without a zone the time is UTC, the zone of every
 * timestamp the platform answers.
 */
export function parseTime(text: string): number | null {
  if (UNIX.test(text)) return Number(text);
  const match = ISO.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const utc = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(utc);
  // Date.UTC rolls 2024-02-30 over to March: a date that does not round-trip does not exist.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return null;
  const fraction = match[7] ? Number(match[7]) : 0;
  return utc / 1000 + fraction - zoneOffsetSeconds(match[8]);
}

function zoneOffsetSeconds(zone: string | undefined): number {
  if (!zone || zone === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const [hours, minutes] = zone.slice(1).split(':').map(Number) as [number, number];
  return sign * (hours * 3600 + minutes * 60);
}

// Prometheus's duration syntax: units largest first, each at most once (`1h30m`, `15s`, `500ms`).
const UNITS: ReadonlyArray<readonly [string, number]> = [['y', 365 * 86400], ['w', 7 * 86400], ['d', 86400], ['h', 3600], ['m', 60], ['s', 1], ['ms', 0.001]];
const DURATION = new RegExp(`^${UNITS.map(([unit]) => `(?:(\\d+)${unit})?`).join('')}$`);
const SECONDS = /^\d{1,12}(\.\d{1,9})?$/;

/** A Prometheus duration (`30s`, `5m`, `1h30m`) or a plain number of seconds, as Prometheus accepts for `step`. */
export function parseDuration(text: string): number | null {
  if (SECONDS.test(text)) return Number(text);
  const match = text ? DURATION.exec(text) : null;
  if (!match) return null;
  return UNITS.reduce((total, [, seconds], index) => total + Number(match[index + 1] ?? 0) * seconds, 0);
}
