import { describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from './direct-space.js';
import { DIRECT_SPACE_ID as CREATED_BY_MIGRATION } from './migrations/0002-collaboration.js';

describe('the direct space id', () => {
  it('is the id migration 0002 gave the direct space row', () => {
    expect(DIRECT_SPACE_ID).toBe(CREATED_BY_MIGRATION);
  });
});
