import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { expect, it } from 'vitest';

import type { Agent, TestApp } from './app.js';

// SDL descriptions say what the server does: each case names a refusal that the description of
// its root field must name, and a call that must get it. A description that stops naming a code
// its field answers, or a field that answers another code, fails.

/** An id that names nothing. */
export const NIL = '0190d5c4-0000-7000-8000-000000000000';

/** One refusal: `field` describes `code`, and `query` asked by `as` answers it. */
export interface RefusalCase {
  field: string;
  code: string;
  query: string;
  vars: () => Record<string, unknown>;
  /** Who asks; null for no session. */
  as: () => Agent | null;
}

/** The description of every Query and Mutation field, as the server serves them. */
export async function rootDescriptions(t: TestApp, as: Agent): Promise<Map<string, string>> {
  const res = await t.gql(getIntrospectionQuery(), {}, as);
  expect(res.body.errors).toBeUndefined();
  const schema = buildClientSchema(res.body.data as unknown as IntrospectionQuery);
  const out = new Map<string, string>();
  for (const root of [schema.getQueryType()!, schema.getMutationType()!]) {
    for (const [name, f] of Object.entries(root.getFields())) out.set(name, f.description ?? '');
  }
  return out;
}

/**
 * One test per case. `app` and `descriptions` are read when the tests run, after the caller's
 * `beforeAll` made them.
 */
export function itAnswersAsDescribed(
  cases: readonly RefusalCase[],
  app: () => TestApp,
  descriptions: () => Map<string, string>,
): void {
  for (const [n, c] of cases.entries()) {
    it(`${c.field} describes and answers ${c.code} (case ${n + 1})`, async () => {
      expect(descriptions().get(c.field)).toMatch(new RegExp(`\\b${c.code}\\b`));
      const res = await app().gql(c.query, c.vars(), c.as());
      const errors = res.body.errors as Array<{ extensions?: { code?: string } }> | undefined;
      expect(errors?.[0]?.extensions?.code, JSON.stringify(res.body)).toBe(c.code);
    });
  }
}
