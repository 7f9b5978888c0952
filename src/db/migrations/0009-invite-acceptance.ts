import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// When a member joined by accepting an invitation to an encrypted conversation. Accepting again
// then changes nothing, while a member who never held an invitation (the creator, or someone
// added with a device) gets NOT_FOUND, as the contract asks.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversation_member').addColumn('acceptedInviteAt', MS).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversation_member').dropColumn('acceptedInviteAt').execute();
}
