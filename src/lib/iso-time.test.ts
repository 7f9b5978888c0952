import { describe, expect, it } from 'vitest';

import { iso, isoTime } from './iso-time.js';

const byDate = (ms: number) => new Date(ms).toISOString();

describe('isoTime', () => {
  it('formats as Date does at the calendar’s edges', () => {
    const edges = [
      0,
      -1,
      1,
      Date.UTC(1969, 11, 31, 23, 59, 59, 999),
      Date.UTC(1900, 1, 28, 23, 59, 59, 999), // 1900: not a leap year
      Date.UTC(1900, 2, 1),
      Date.UTC(2000, 1, 29, 12), // 2000: a leap year
      Date.UTC(2024, 1, 29),
      Date.UTC(2100, 2, 1),
      Date.UTC(2026, 10, 28, 3, 4, 5, 6),
      -62_167_219_200_000, // 0000-01-01T00:00:00.000Z
      -62_162_035_200_000, // 0000-03-01, after year 0's leap day
      253_402_300_799_999, // 9999-12-31T23:59:59.999Z
    ];
    for (const ms of edges) expect(isoTime(ms), String(ms)).toBe(byDate(ms));
    expect(isoTime(-62_167_219_200_000)).toBe('0000-01-01T00:00:00.000Z');
    expect(isoTime(253_402_300_799_999)).toBe('9999-12-31T23:59:59.999Z');
  });

  it('formats as Date does over every day of 400 years and at random times', () => {
    const start = Date.UTC(1800, 0, 1);
    for (let day = 0; day < 146_097; day += 1) {
      const ms = start + day * 86_400_000 + ((day * 7_919_993) % 86_400_000);
      if (isoTime(ms) !== byDate(ms)) expect(isoTime(ms)).toBe(byDate(ms));
    }
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 100_000; i += 1) {
      const ms = Math.floor(-62_167_219_200_000 + next() * 315_569_520_000_000);
      if (isoTime(ms) !== byDate(ms)) expect(isoTime(ms)).toBe(byDate(ms));
    }
  });

  it('formats times of one day, and either side of midnight, in any order, as Date does', () => {
    const midnight = Date.UTC(2026, 10, 28);
    const times = [
      midnight - 1,
      midnight,
      midnight + 1,
      midnight - 1,
      midnight + 86_399_999,
      midnight + 86_400_000,
      midnight + 12_345_678,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2024, 1, 29, 0, 0, 0, 0),
      Date.UTC(2024, 2, 1),
      midnight + 5,
    ];
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    // A page's times: many of one day in a row.
    for (let ms = midnight - 30_000; ms < midnight + 30_000; ms += 997) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('leaves times outside years 0000–9999, and fractions, to Date', () => {
    expect(isoTime(-62_167_219_200_001)).toBe('-000001-12-31T23:59:59.999Z');
    expect(isoTime(253_402_300_800_000)).toBe('+010000-01-01T00:00:00.000Z');
    expect(isoTime(1.5)).toBe('1970-01-01T00:00:00.001Z');
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });

  it('passes null through', () => {
    expect(iso(null)).toBeNull();
    expect(iso(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});
