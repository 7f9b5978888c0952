import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { deferMessageTerms } from '../../src/services/search/index.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { ok, send, sharedChannel } from '../conversations/_helpers.js';

import { bareMessages, segments as countSegments, termsOf as rowTerms } from './_rows.js';

// A message's search row is written with its send or edit and commits with it (docs/search.md,
// "Indexing"). On SQLite it is held until the end of the group commit (`Tx.atGroupEnd`): FTS5
// writes its pending terms out at every savepoint, so written in place each send of a group made
// an index segment of its own. Held, the group makes one; only transactions that succeeded write
// theirs, in order, and a message deleted later in the group gets no row.

describe('search rows written at the end of the group', () => {
  let t: TestApp;
  let ann: Agent;
  let general: string;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await signUpAndIn(t, { username: 'anngroup' });
    general = await sharedChannel(t, ann, [], 'Groups');
  });
  afterAll(async () => t?.close());

  const bare = (n: number) => bareMessages(t, ann, general, n);
  const termsOf = (id: string) => rowTerms(t, id);

  it('writes a failed transaction’s row never, and its neighbours’ rows', async () => {
    const [a, b, c] = await bare(3);
    const outcomes = await Promise.allSettled(
      [a!, b!, c!].map((m, i) =>
        t.ctx.db.transaction(async (tx) => {
          await deferMessageTerms(tx, m, [`lynx${i}`]);
          if (i === 1) throw new Error('this one fails after holding its row');
        }),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await termsOf(a!.id)).toBe('lynx0');
    expect(await termsOf(b!.id)).toBeNull();
    expect(await termsOf(c!.id)).toBe('lynx2');
  });

  it('finds a sent message by its words at once', async () => {
    const m = await send(t, ann, general, 'heron sighted upstream');
    const found = ok(
      await t.gql(
        'query($q: String!) { searchMessages(query: $q) { items { message { id } } } }',
        { q: 'heron' },
        ann,
      ),
    );
    expect(found.searchMessages.items.map((i: any) => i.message.id)).toEqual([m.id]);
  });

  describe.runIf(TEST_DB === 'sqlite')('in one group commit (SQLite)', () => {
    const segments = () => countSegments(t);

    it('makes one index segment for the group’s rows, not one a transaction', async () => {
      const list = await bare(3);
      // Every segment merged into one, so the count below says what the group added.
      await sql`insert into message_search_fts(message_search_fts) values ('optimize')`.execute(
        t.ctx.db.kysely,
      );
      expect(await segments()).toBe(1);
      await Promise.all(
        list.map((m, i) =>
          t.ctx.db.transaction(async (tx) => {
            await deferMessageTerms(tx, m, [`otter${i}`, 'river']);
          }),
        ),
      );
      expect(t.ctx.db.groupCommitter?.lastGroupSize).toBe(3);
      expect(await segments()).toBe(2);
      for (const [i, m] of list.entries()) expect(await termsOf(m.id)).toBe(`otter${i} river`);
    });

    it('writes the rows in the order of their transactions: an edit after its send wins', async () => {
      const [m] = await bare(1);
      await Promise.all([
        t.ctx.db.transaction((tx) => deferMessageTerms(tx, m!, ['sent', 'words'])),
        t.ctx.db.transaction((tx) => deferMessageTerms(tx, m!, ['edited', 'words'])),
      ]);
      expect(t.ctx.db.groupCommitter?.lastGroupSize).toBe(2);
      expect(await termsOf(m!.id)).toBe('edited words');
    });

    it('gives no row to a message deleted later in the group', async () => {
      const [m] = await bare(1);
      await Promise.all([
        t.ctx.db.transaction((tx) => deferMessageTerms(tx, m!, ['gone', 'soon'])),
        t.ctx.db.transaction(async (tx) => {
          await tx.db
            .updateTable('message')
            .set({ text: null, deletedAt: Date.now() })
            .where('id', '=', m!.id)
            .execute();
        }),
      ]);
      expect(t.ctx.db.groupCommitter?.lastGroupSize).toBe(2);
      expect(await termsOf(m!.id)).toBeNull();
    });
  });
});
