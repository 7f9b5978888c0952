import type { Agent, TestApp } from '../_util/app.js';
import { ok } from '../workspaces/_helpers.js';

export const RESULT = `status message messageId auditId args
  command { name destructive capability aiCallable nlDescription intentSamples source { kind pluginId } }
  confirmation { token summary expiresAt }`;

export const EXEC = `mutation($i: ExecuteCommandInput!) { executeCommand(input: $i) { ${RESULT} } }`;

export const exec = (t: TestApp, agent: Agent, input: Record<string, unknown>) =>
  t.gql(EXEC, { i: input }, agent);

export async function generalOf(t: TestApp, agent: Agent, serverId: string): Promise<string> {
  const channels = ok(
    await t.gql('query($s: ID!) { channels(serverId: $s) { id name } }', { s: serverId }, agent),
  ).channels as Array<{ id: string; name: string }>;
  return channels.find((c) => c.name === 'general')!.id;
}

/** The command audit rows (details parsed), oldest first. */
export async function auditRows(t: TestApp, actorId?: string) {
  let q = t.ctx.db.kysely
    .selectFrom('audit_log')
    .selectAll()
    .where('kind', '=', 'command')
    .orderBy('createdAt')
    .orderBy('id');
  if (actorId) q = q.where('actorId', '=', actorId);
  const rows = await q.execute();
  return rows.map((r) => ({ ...r, d: JSON.parse(r.details ?? '{}') as Record<string, any> }));
}
