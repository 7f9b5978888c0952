import {
  buildSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  type GraphQLSchema,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type TestApp } from '../_util/app.js';

// Contract, Versioning: enum values are SCREAMING_SNAKE and fields camelCase. Checked over the
// SDL the running build serves, so a new type, field, argument or value is checked unnoticed.

const ENUM_VALUE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
const CAMEL = /^[a-z][a-zA-Z0-9]*$/;
const PASCAL = /^[A-Z][a-zA-Z0-9]*$/;

/** Every name of `schema` that breaks the naming rules, as `Type.field(arg)` paths. */
function namingViolations(schema: GraphQLSchema): string[] {
  const out: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (!PASCAL.test(type.name)) out.push(`type ${type.name}`);
    if (isEnumType(type)) {
      for (const v of type.getValues()) {
        if (!ENUM_VALUE.test(v.name)) out.push(`enum value ${type.name}.${v.name}`);
      }
    }
    if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!CAMEL.test(field.name)) out.push(`field ${type.name}.${field.name}`);
        for (const arg of 'args' in field ? field.args : []) {
          if (!CAMEL.test(arg.name)) out.push(`argument ${type.name}.${field.name}(${arg.name})`);
        }
      }
    }
  }
  return out;
}

describe('names in the served SDL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('has enum values in SCREAMING_SNAKE_CASE, fields and arguments in camelCase', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/sdl' });
    expect(res.statusCode).toBe(200);
    const schema = buildSchema(res.body);
    expect(Object.keys(schema.getTypeMap()).length).toBeGreaterThan(100);
    expect(namingViolations(schema)).toEqual([]);
  });

  it('the check names each kind of breach', () => {
    const bad = buildSchema(`
      enum Colour { DARK_RED lightBlue Green_ish }
      input new_input { some_field: Int }
      type Query { okField(bad_arg: Int): Int, BadField: Int, snake_field: Colour }
    `);
    expect(namingViolations(bad).sort()).toEqual(
      [
        'enum value Colour.lightBlue',
        'enum value Colour.Green_ish',
        'type new_input',
        'field new_input.some_field',
        'argument Query.okField(bad_arg)',
        'field Query.BadField',
        'field Query.snake_field',
      ].sort(),
    );
  });
});
