import { jsonPointer } from './bounded-json.js';

// The part of JSON Schema (2020-12) the bundle schema uses, interpreted over a parsed value
// (no ajv in the project; docs/decisions.md, "Plugin bundles"). Keywords: type, const, enum,
// properties, required, additionalProperties, propertyNames, minProperties, maxProperties, items,
// minItems, maxItems, minLength, maxLength, pattern, minimum, maximum and local `$ref`s to
// `#/$defs/<name>`. Annotations ($schema, $id, title, description, $defs) are ignored. A keyword
// outside this list in a schema is a programming error, so `checkSchemaKeywords` refuses it.

export type Schema = { [keyword: string]: unknown };

/** One violation: where in the value (JSON pointer) and what is wrong there. */
export interface SchemaViolation {
  pointer: string;
  message: string;
}

const KEYWORDS = new Set([
  '$schema',
  '$id',
  '$defs',
  '$ref',
  'title',
  'description',
  'type',
  'const',
  'enum',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
]);

/** Keywords of `schema` (at any depth) this interpreter does not know; empty when all are known. */
export function unknownKeywords(schema: unknown, at: (string | number)[] = []): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(schema)) {
    if (!KEYWORDS.has(k)) out.push(jsonPointer([...at, k]));
    if (k === 'properties' || k === '$defs') {
      for (const [name, sub] of Object.entries(v as Schema)) {
        out.push(...unknownKeywords(sub, [...at, k, name]));
      }
    } else if (k === 'items' || k === 'additionalProperties' || k === 'propertyNames') {
      out.push(...unknownKeywords(v, [...at, k]));
    }
  }
  return out;
}

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v;

function matchesType(v: unknown, type: string): boolean {
  if (type === 'integer') return typeof v === 'number' && Number.isInteger(v);
  return typeOf(v) === type;
}

/** Length in code points, as JSON Schema counts it (cheap when the UTF-16 length decides). */
function codePoints(s: string, bound: number): number {
  if (s.length <= bound) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Checks `value` against `schema` (whose `$defs` the `$ref`s resolve in) and answers the
 * violations in document order, at most `max` of them.
 */
export function validateAgainst(value: unknown, schema: Schema, max = 10): SchemaViolation[] {
  const root = schema;
  const out: SchemaViolation[] = [];
  const patterns = new Map<string, RegExp>();
  const re = (p: string) => {
    let r = patterns.get(p);
    if (!r) patterns.set(p, (r = new RegExp(p, 'u')));
    return r;
  };
  const report = (path: (string | number)[], message: string) => {
    if (out.length < max) out.push({ pointer: jsonPointer(path) || '/', message });
  };

  const walk = (v: unknown, s: Schema, path: (string | number)[]): void => {
    if (out.length >= max) return;
    if (typeof s.$ref === 'string') {
      const m = /^#\/\$defs\/([A-Za-z0-9_]+)$/.exec(s.$ref);
      const target = m ? (root.$defs as Record<string, Schema> | undefined)?.[m[1]!] : undefined;
      if (!target) throw new Error(`unresolvable $ref ${s.$ref}`);
      walk(v, target, path);
    }
    if ('const' in s && !deepEqual(v, s.const)) {
      return report(path, `must be ${JSON.stringify(s.const)}`);
    }
    if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, v))) {
      return report(path, `must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`);
    }
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
      if (!types.some((t) => matchesType(v, t))) {
        return report(
          path,
          `must be ${types.map(article).join(' or ')}, not ${article(typeOf(v))}`,
        );
      }
    }
    if (typeof v === 'string') {
      if (typeof s.minLength === 'number' && codePoints(v, s.minLength) < s.minLength) {
        report(
          path,
          s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`,
        );
      }
      if (typeof s.maxLength === 'number' && codePoints(v, s.maxLength) > s.maxLength) {
        report(path, `is longer than the limit of ${s.maxLength} characters`);
      }
      if (typeof s.pattern === 'string' && !re(s.pattern).test(v)) {
        report(path, `${JSON.stringify(v.slice(0, 80))} does not match the pattern ${s.pattern}`);
      }
    }
    if (typeof v === 'number') {
      if (typeof s.minimum === 'number' && v < s.minimum)
        report(path, `must be at least ${s.minimum}`);
      if (typeof s.maximum === 'number' && v > s.maximum)
        report(path, `must be at most ${s.maximum}`);
    }
    if (Array.isArray(v)) {
      if (typeof s.minItems === 'number' && v.length < s.minItems) {
        report(path, `must have at least ${s.minItems} items`);
      }
      if (typeof s.maxItems === 'number' && v.length > s.maxItems) {
        return report(path, `has ${v.length} items, more than the limit of ${s.maxItems}`);
      }
      if (s.items && typeof s.items === 'object') {
        v.forEach((item, i) => walk(item, s.items as Schema, [...path, i]));
      }
    }
    if (typeOf(v) === 'object') {
      const obj = v as Record<string, unknown>;
      const keys = Object.keys(obj);
      if (typeof s.minProperties === 'number' && keys.length < s.minProperties) {
        report(
          path,
          `must have at least ${s.minProperties} member${s.minProperties === 1 ? '' : 's'}`,
        );
      }
      if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties) {
        return report(
          path,
          `has ${keys.length} members, more than the limit of ${s.maxProperties}`,
        );
      }
      for (const r of (s.required as string[] | undefined) ?? []) {
        if (!Object.hasOwn(obj, r)) report(path, `the member ${JSON.stringify(r)} is missing`);
      }
      const props = (s.properties as Record<string, Schema> | undefined) ?? {};
      for (const k of keys) {
        if (s.propertyNames && typeof s.propertyNames === 'object') {
          const before = out.length;
          walk(k, s.propertyNames as Schema, [...path, k]);
          for (let i = before; i < out.length; i++) out[i]!.message = `the name ${out[i]!.message}`;
        }
        if (Object.hasOwn(props, k)) walk(obj[k], props[k]!, [...path, k]);
        else if (s.additionalProperties === false) {
          report([...path, k], `${JSON.stringify(k)} is not a member this format knows`);
        } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
          walk(obj[k], s.additionalProperties as Schema, [...path, k]);
        }
      }
    }
  };
  walk(value, schema, []);
  return out;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
