import { buildSchema, getIntrospectionQuery, validate, type DocumentNode } from 'graphql';
import { describe, expect, it } from 'vitest';

import {
  checkDocumentLimits,
  checkDocumentSource,
  countMutationFields,
  DOCUMENT_LIMITS,
  parseBounded,
} from './document-limits.js';

function parsed(source: string): DocumentNode {
  const result = parseBounded(source);
  if ('error' in result)
    throw new Error(`expected ${source.slice(0, 60)} to parse: ${result.error}`);
  return result.document;
}

/** `a { a { ... n } }`, `depth` fields deep counting `n`. */
function nestedFields(depth: number): string {
  return `${'a { '.repeat(depth - 1)}n${' }'.repeat(depth - 1)}`;
}

/** Fragments B0 ... B`levels`, each spreading the next twice. */
function fragmentBomb(kind: string, levels: number, leaf: string): string {
  const type = kind === 'mutation' ? 'M' : 'Q';
  const parts = [`${kind} { ...B0 }`];
  for (let i = 0; i < levels; i += 1) {
    parts.push(`fragment B${i} on ${type} { ...B${i + 1} ...B${i + 1} }`);
  }
  parts.push(`fragment B${levels} on ${type} { ${leaf} }`);
  return parts.join('\n');
}

function aliases(count: number, field = 'n'): string {
  return Array.from({ length: count }, (_, i) => `a${i}: ${field}`).join(' ');
}

const elapsed = (run: () => unknown): number => {
  const started = performance.now();
  run();
  return performance.now() - started;
};

describe('parseBounded', () => {
  it('parses an ordinary document', () => {
    const result = parseBounded('query Me { me { id name } }');
    expect('document' in result && result.document.definitions).toHaveLength(1);
  });

  it('returns a syntax error as text', () => {
    expect(parseBounded('query { me ')).toEqual({ error: expect.stringMatching(/^Syntax Error/) });
    expect(parseBounded('{ me % }')).toEqual({ error: expect.stringMatching(/^Syntax Error/) });
  });

  it('refuses a source over the byte limit before lexing it', () => {
    const source = `{ me(note: "${'x'.repeat(DOCUMENT_LIMITS.maxBytes)}") }`;
    expect(parseBounded(source)).toEqual({ error: 'document too large: more than 100000 bytes' });
  });

  it('counts bytes, not UTF-16 units', () => {
    // 40,000 three-byte characters: 120,000 bytes in 40,000 code units.
    const source = `{ me(note: "${'€'.repeat(40_000)}") }`;
    expect(parseBounded(source)).toEqual({ error: 'document too large: more than 100000 bytes' });
  });

  it('refuses more than maxTokens tokens', () => {
    // `{`, 10,000 fields and `}`.
    expect(parseBounded(`{${' n'.repeat(10_000)} }`)).toEqual({
      error: 'document too large: more than 10000 tokens',
    });
    expect('document' in parseBounded(`{${' n'.repeat(9_998)} }`)).toBe(true);
  });

  it('does not count comments as tokens', () => {
    const source = `{ n }\n${'#\n'.repeat(11_000)}`;
    expect('document' in parseBounded(source)).toBe(true);
  });

  it('refuses a document nested 5,000 deep without throwing', () => {
    const source = `{ ${'a { '.repeat(5_000)}n${' }'.repeat(5_000)} }`;
    expect(() => parseBounded(source)).not.toThrow();
    expect(parseBounded(source)).toEqual({
      error: 'document nested too deeply: more than 100 levels of brackets',
    });
  });

  it('refuses deep nesting that fits in the token limit, which overflows the parser', () => {
    const fields = `{ ${'a { '.repeat(3_000)}n${' }'.repeat(3_000)} }`;
    const list = `{ a(x: ${'['.repeat(4_000)}${']'.repeat(4_000)}) }`;
    const object = `{ a(x: ${'{ b: '.repeat(3_000)}1${' }'.repeat(3_000)}) }`;
    for (const source of [fields, list, object]) {
      expect(parseBounded(source)).toEqual({
        error: 'document nested too deeply: more than 100 levels of brackets',
      });
    }
  });

  it('allows exactly maxNesting levels of brackets', () => {
    // 100 braces; the fields inside are then the depth check's business.
    expect('document' in parseBounded(`{ ${nestedFields(100)} }`)).toBe(true);
    expect(parseBounded(`{ ${nestedFields(101)} }`)).toEqual({
      error: 'document nested too deeply: more than 100 levels of brackets',
    });
  });

  it('checkDocumentSource returns null for an ordinary source', () => {
    expect(checkDocumentSource(getIntrospectionQuery())).toBeNull();
  });
});

describe('checkDocumentLimits', () => {
  it('passes the introspection queries GraphiQL sends', () => {
    const full = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
    });
    expect(checkDocumentLimits(parsed(getIntrospectionQuery()))).toBeNull();
    expect(checkDocumentLimits(parsed(full))).toBeNull();
  });

  it('allows maxDepth nested fields and refuses one more', () => {
    expect(checkDocumentLimits(parsed(`{ ${nestedFields(20)} }`))).toBeNull();
    expect(checkDocumentLimits(parsed(`{ ${nestedFields(21)} }`))).toBe(
      'query too deep: more than 20 levels of nested fields',
    );
  });

  it('counts depth through named and inline fragments', () => {
    const source = `{ a { ...F } }
      fragment F on Q { a { ... on Q { a { ...G } } } }
      fragment G on Q { ${nestedFields(18)} }`;
    // a, a, a, then 18 inside G.
    expect(checkDocumentLimits(parsed(source))).toBe(
      'query too deep: more than 20 levels of nested fields',
    );
  });

  it('refuses many aliases', () => {
    expect(checkDocumentLimits(parsed(`{ ${aliases(100)} }`))).toBeNull();
    expect(checkDocumentLimits(parsed(`{ ${aliases(3_000)} }`))).toBe(
      'too many aliases: more than 100',
    );
  });

  it('refuses 10,000 aliases at the token limit, before building a syntax tree', () => {
    expect(parseBounded(`{ ${aliases(10_000)} }`)).toEqual({
      error: 'document too large: more than 10000 tokens',
    });
  });

  it('counts aliases each time their fragment is spread', () => {
    const source = `{ ...F ...F } fragment F on Q { ${aliases(60)} }`;
    expect(checkDocumentLimits(parsed(source))).toBe('too many aliases: more than 100');
  });

  it('refuses more than maxFields fields once fragments are expanded', () => {
    const fragment = `fragment F on Q {${' n'.repeat(100)} }`;
    expect(checkDocumentLimits(parsed(`{${' ...F'.repeat(50)} } ${fragment}`))).toBeNull();
    expect(checkDocumentLimits(parsed(`{${' ...F'.repeat(51)} } ${fragment}`))).toBe(
      'query too complex: more than 5000 fields with fragments expanded',
    );
  });

  it('refuses more than maxFragmentExpansions spreads', () => {
    expect(checkDocumentLimits(parsed(`{${' ...F'.repeat(1_000)} } fragment F on Q { n }`))).toBe(
      null,
    );
    expect(checkDocumentLimits(parsed(`{${' ...F'.repeat(1_001)} } fragment F on Q { n }`))).toBe(
      'query too complex: more than 1000 fragments with fragments expanded',
    );
    expect(checkDocumentLimits(parsed(`{${' ... { n }'.repeat(1_001)} }`))).toBe(
      'query too complex: more than 1000 fragments with fragments expanded',
    );
  });

  it('refuses a fragment bomb at once', () => {
    const document = parsed(fragmentBomb('query', 30, 'n'));
    let message: string | null = null;
    expect(elapsed(() => (message = checkDocumentLimits(document)))).toBeLessThan(500);
    expect(message).toBe('query too complex: more than 5000 fields with fragments expanded');
  });

  it('refuses a fragment bomb 900 levels high, in linear time', () => {
    const document = parsed(fragmentBomb('query', 900, 'n'));
    expect(elapsed(() => expect(checkDocumentLimits(document)).not.toBeNull())).toBeLessThan(500);
  });

  it('leaves fragment cycles to validation, without hanging', () => {
    const source = '{ ...A } fragment A on Q { n ...B } fragment B on Q { a { ...A } }';
    const document = parsed(source);
    expect(checkDocumentLimits(document)).toBeNull();
    const schema = buildSchema('type Q { a: Q n: Int } schema { query: Q }');
    expect(validate(schema, document).map((e) => e.message)).toContainEqual(
      expect.stringMatching(/^Cannot spread fragment "A" within itself/),
    );
  });

  it('ignores a spread of an unknown fragment, which validation reports', () => {
    expect(checkDocumentLimits(parsed('{ n ...Missing }'))).toBeNull();
  });

  it('refuses too many directives on one selection', () => {
    const many = ' @skip(if: false)'.repeat(11);
    expect(checkDocumentLimits(parsed(`{ n${many} }`))).toBe(
      'too many directives on one selection: more than 10',
    );
    expect(checkDocumentLimits(parsed(`{ ...F } fragment F on Q { ... on Q${many} { n } }`))).toBe(
      'too many directives on one selection: more than 10',
    );
    expect(checkDocumentLimits(parsed(`query Q${many} { n }`))).toBe(
      'too many directives on one selection: more than 10',
    );
    expect(checkDocumentLimits(parsed(`{ n${' @skip(if: false)'.repeat(10)} }`))).toBeNull();
  });

  it('checks every operation without a name, only the selected one with', () => {
    const document = parsed(`query Deep { ${nestedFields(25)} } query Flat { n }`);
    expect(checkDocumentLimits(document)).toMatch(/^query too deep/);
    expect(checkDocumentLimits(document, null)).toMatch(/^query too deep/);
    expect(checkDocumentLimits(document, 'Deep')).toMatch(/^query too deep/);
    expect(checkDocumentLimits(document, 'Flat')).toBeNull();
    // Execution reports an operation that cannot be selected.
    expect(checkDocumentLimits(document, 'Missing')).toBeNull();
  });

  it('does not count an unused fragment against the operation', () => {
    const source = `{ n } fragment Unused on Q { ${nestedFields(30)} }`;
    expect(checkDocumentLimits(parsed(source))).toBeNull();
  });
});

describe('countMutationFields', () => {
  it.each([
    { name: 'one field', source: 'mutation { x }', count: 1 },
    { name: 'fields below the root do not count', source: 'mutation { x { a b c } }', count: 1 },
    { name: 'each alias counts', source: 'mutation { a: x b: x c: x }', count: 3 },
    {
      name: 'a fragment spread twice counts twice',
      source: 'mutation { ...F ...F } fragment F on M { x y }',
      count: 4,
    },
    {
      name: 'inline fragments and nested named fragments are expanded',
      source: `mutation { x ... on M { y ...F } }
        fragment F on M { z ... { ...G } } fragment G on M { a: x b: x }`,
      count: 5,
    },
    {
      name: '@skip and @include count whatever their condition',
      source: 'mutation { x @skip(if: true) y @include(if: false) ... @skip(if: true) { z } }',
      count: 3,
    },
    { name: '__typename runs nothing', source: 'mutation { x __typename }', count: 1 },
    { name: 'a query counts 0', source: 'query { a b c }', count: 0 },
    { name: 'query shorthand counts 0', source: '{ a b }', count: 0 },
    { name: 'a subscription counts 0', source: 'subscription { a }', count: 0 },
    {
      name: 'an unknown fragment counts nothing',
      source: 'mutation { x ...Missing }',
      count: 1,
    },
  ])('$name', ({ source, count }) => {
    expect(countMutationFields(parsed(source))).toBe(count);
  });

  it('selects the operation by name', () => {
    const document = parsed('query Q { a } mutation One { x } mutation Two { x y }');
    expect(countMutationFields(document, 'Q')).toBe(0);
    expect(countMutationFields(document, 'One')).toBe(1);
    expect(countMutationFields(document, 'Two')).toBe(2);
  });

  it('answers null when no operation can be selected', () => {
    const document = parsed('mutation One { x } mutation Two { y }');
    expect(countMutationFields(document)).toBeNull();
    expect(countMutationFields(document, null)).toBeNull();
    expect(countMutationFields(document, 'Three')).toBeNull();
    expect(countMutationFields(parsed('mutation A { x } mutation A { y }'), 'A')).toBeNull();
    expect(countMutationFields(parsed('fragment F on M { x }'))).toBeNull();
  });

  it('caps a fragment bomb, quickly', () => {
    const document = parsed(fragmentBomb('mutation', 30, 'x'));
    let count: number | null = null;
    expect(elapsed(() => (count = countMutationFields(document)))).toBeLessThan(500);
    expect(count).toBe(DOCUMENT_LIMITS.mutationFieldCountCap);
  });

  it('gives a finite count for fragments that spread each other', () => {
    const document = parsed(
      'mutation { ...A } fragment A on M { x ...B } fragment B on M { y ...A }',
    );
    expect(countMutationFields(document)).toBe(2);
  });
});
