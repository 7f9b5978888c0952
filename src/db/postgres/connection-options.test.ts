import { describe, expect, it } from 'vitest';

import { withConnectionOptions } from './open.js';

const optionsOf = (url: string) => new URL(url).searchParams.get('options');

describe('withConnectionOptions', () => {
  it("keeps the URL's own options, then plans named statements once, then the schema", () => {
    const url = withConnectionOptions(
      'postgres://u:p@h:5433/db?options=-c%20statement_timeout%3D5000&sslmode=disable',
      'tenant_a',
    );
    expect(optionsOf(url)).toBe(
      '-c statement_timeout=5000 -c plan_cache_mode=force_generic_plan -c search_path=tenant_a',
    );
    expect(url).toMatch(/^postgres:\/\/u:p@h:5433\/db\?/);
    expect(new URL(url).searchParams.get('sslmode')).toBe('disable');
  });

  it('adds its own alone for a URL without options and no schema', () => {
    expect(optionsOf(withConnectionOptions('postgres://u@h/db', undefined))).toBe(
      '-c plan_cache_mode=force_generic_plan',
    );
  });
});
