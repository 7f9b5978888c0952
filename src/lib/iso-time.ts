/** The first and last millisecond `isoTime` formats itself: years 0000 to 9999. */
const FIRST = -62_167_219_200_000;
const LAST = 253_402_300_799_999;
const DAY = 86_400_000;

const TWO = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

/** The day `isoTime` formatted last (days since 1970-01-01), and its date. */
let lastDay = Number.NaN;
let lastDate = '';

/**
 * `new Date(ms).toISOString()` (RFC 3339 UTC with milliseconds, as the API sends every
 * DateTime), without the `Date`: V8 formats that with the C library's `snprintf`, about 5,000
 * instructions a call, and a page of 30 messages made 30 of them (bench `instructions`). This is
 * the proleptic Gregorian calendar's arithmetic (days to civil date, after H. Hinnant's
 * `civil_from_days`); times outside years 0000–9999, and fractions of a millisecond, are left to
 * `Date`, which also gives the same answer or the same `RangeError`.
 */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < FIRST || ms > LAST) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY);
  let rest = ms - days * DAY;
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / 60_000);
  rest -= minute * 60_000;
  const second = Math.floor(rest / 1000);
  const milli = rest - second * 1000;
  // The times of a page are mostly of one day: its date is kept from the call before.
  if (days !== lastDay) {
    lastDate = civilDate(days);
    lastDay = days;
  }
  return `${lastDate}T${TWO[hour]}:${TWO[minute]}:${TWO[second]}.${THREE[milli]}Z`;
}

/** `YYYY-MM-DD` of `days` since 1970-01-01, for years 0000 to 9999. */
function civilDate(days: number): string {
  // Days since 0000-03-01, in eras of 400 years (146,097 days), so leap days end each year.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${TWO[Math.floor(year / 100)]}${TWO[year % 100]}-${TWO[month]}-${TWO[day]}`;
}

/** `isoTime`, with null for null (a time not set). */
export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : isoTime(ms);
}
