import { buildSchema, execute, parse, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';

import { selects } from './selection.js';

const schema = buildSchema(`
  type User { id: ID! }
  type Message { id: ID! author: User text: String }
  type Page { items: [Message!]! hasMore: Boolean! }
  type Query { messages: Page! }
`);

/** What `selects(info, path)` answers inside the `messages` resolver for `query`. */
function answer(query: string, path: string[]): boolean {
  let seen: boolean | undefined;
  const result = execute({
    schema,
    document: parse(query),
    rootValue: {
      messages: (_args: unknown, _ctx: unknown, info: GraphQLResolveInfo) => {
        seen = selects(info, path);
        return { items: [], hasMore: false };
      },
    },
  });
  expect(result).not.toHaveProperty('errors');
  return seen!;
}

describe('selects', () => {
  const path = ['items', 'author'];

  it('finds a field selected directly, under an alias too', () => {
    expect(answer('{ messages { items { id author { id } } } }', path)).toBe(true);
    expect(answer('{ messages { items { writer: author { id } } } }', path)).toBe(true);
  });

  it('finds it through inline and named fragments', () => {
    expect(
      answer('{ messages { ... on Page { items { ... on Message { author { id } } } } } }', path),
    ).toBe(true);
    expect(
      answer(
        'query { messages { items { ...M } } } fragment M on Message { text author { id } }',
        path,
      ),
    ).toBe(true);
  });

  it('answers false when the path is not selected', () => {
    expect(answer('{ messages { items { id text } hasMore } }', path)).toBe(false);
    expect(answer('{ messages { hasMore } }', path)).toBe(false);
    expect(answer('{ messages { items { id } } }', ['items', 'author', 'id'])).toBe(false);
  });

  it('answers each path of the same document on its own', () => {
    const query = '{ messages { items { text } } }';
    const document = parse(query);
    const answers: boolean[] = [];
    const run = () =>
      execute({
        schema,
        document,
        rootValue: {
          messages: (_a: unknown, _c: unknown, info: GraphQLResolveInfo) => {
            answers.push(selects(info, ['items', 'text']), selects(info, ['items', 'author']));
            return { items: [], hasMore: false };
          },
        },
      });
    run();
    run();
    expect(answers).toEqual([true, false, true, false]);
  });
});
