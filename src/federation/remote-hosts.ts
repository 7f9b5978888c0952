import type { Executor } from '../db/database.js';
import { validation } from '../errors.js';
import {
  keysetQuery,
  keysetRows,
  parseKeysetArgs,
  type KeysetArgs,
  type KeysetPage,
} from '../services/paging/index.js';

/** The most hosts one `myRemoteHosts` page answers, and its default. */
export const MY_REMOTE_HOSTS_MAX = 1000;

/**
 * One page of the hosts `accountId` used through this relay, first used first (then by id). A
 * host's own id is its cursor: `after` a host of the list continues past it, `before` it goes
 * back; VALIDATION for both, for a limit outside 1..1000, or for a host that is not in the list.
 */
export async function remoteHostsPage(
  db: Executor,
  accountId: string,
  args: KeysetArgs,
): Promise<string[]> {
  // The list's own cursors are host ids, not keyset cursors: only the limit is read the shared way.
  const { limit } = parseKeysetArgs(
    { limit: args.limit },
    { max: MY_REMOTE_HOSTS_MAX, default: MY_REMOTE_HOSTS_MAX },
  );
  if (args.after && args.before) throw validation('pass at most one of after and before');
  const page: KeysetPage = { limit };
  const cursorHost = args.after ?? args.before;
  if (cursorHost) {
    const row = await db
      .selectFrom('relay_host')
      .select('firstUsedAt')
      .where((eb) => eb.and({ accountId, hostServerId: cursorHost }))
      .executeTakeFirst();
    const name = args.after ? 'after' : 'before';
    if (!row) throw validation(`${name} must be a host of this list; ${cursorHost} is not one`);
    page[name] = { at: Number(row.firstUsedAt), id: cursorHost };
  }
  const q = db.selectFrom('relay_host').select('hostServerId').where('accountId', '=', accountId);
  const rows = await keysetQuery(
    q,
    { at: 'firstUsedAt', key: 'hostServerId' },
    'asc',
    page,
  ).execute();
  return keysetRows(rows, page).map((r) => r.hostServerId);
}
