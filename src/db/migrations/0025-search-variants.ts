import { sql, type Kysely } from 'kysely';

// The analysis joins more forms (src/services/search/variants.ts: French "-ent", Swedish "-an",
// Danish "-ede", Polish -ować, Ukrainian "-ок" and -ювати, Turkish verbs, Arabic ت before a
// suffix) and splits a compound the word list names as its listed form. The backfill starts
// again from the oldest message so every row gets them; until a row is rewritten it keeps its
// terms, so searches are served from them meanwhile (docs/search.md, "Rebuilding").
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`insert into search_backfill (id, "afterAt", "afterId") values ('messages', null, null)
    on conflict (id) do update set "afterAt" = null, "afterId" = null`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
