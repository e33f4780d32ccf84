/**
 * Durations as people write them in Kubernetes objects (Go's time.ParseDuration without fractions): `90s`, `30m`,
 * `1h30m`, `2h`. Used by soak times and maintenance windows; `0s` is allowed (no soak).
 */
const PART = /(\d+)(h|m|s)/g;
const WHOLE = /^(\d+(h|m|s))+$/;
/** The same syntax as a regular expression JavaScript and RE2 (the CRDs' CEL) read alike. */
export const DURATION_PATTERN = WHOLE.source;
const UNIT_MS = { h: 3_600_000, m: 60_000, s: 1000 } as const;

/** Milliseconds of a duration, or undefined when `text` is not one. */
export function parseDuration(text: string): number | undefined {
  if (!WHOLE.test(text)) return undefined;
  let ms = 0;
  for (const m of text.matchAll(PART)) ms += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms;
}

/** 5400000 → `1h30m`; for messages. */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  const s = Math.ceil(ms / 1000);
  const parts = [
    [Math.floor(s / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'm'],
    [s % 60, 's'],
  ] as const;
  return parts
    .filter(([n]) => n > 0)
    .map(([n, u]) => `${n}${u}`)
    .join('');
}
