// Reading fields of parsed export JSON: each answers null (or empty) for a value of another type,
// so a malformed item is found by the reader that needs the field. Shared by both importers.

export type Json = Record<string, unknown>;

export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
export const obj = (v: unknown): Json | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
