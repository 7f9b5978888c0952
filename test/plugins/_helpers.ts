import { expect } from 'vitest';

import { agentHeaders, type Agent, type TestApp } from '../_util/app.js';

export const BUNDLE_TYPE = 'application/vnd.svc.plugin-bundle+json';

export const PLUGIN_FIELDS = `id serverId pluginId name version description author { name email url }
  capabilities enabled settings settingsSchema bundleSha256 bundleSize bundleUrl addedBy
  commands { name description arguments { name type description required } source { workspacePluginId pluginId version } }
  keybinds { keys command description source { workspacePluginId pluginId version } }`;

export const LIST = `query($s: ID!) { workspacePlugins(serverId: $s) { ${PLUGIN_FIELDS} } }`;
export const ADD = `mutation($i: AddWorkspacePluginInput!) { addWorkspacePlugin(input: $i) { ${PLUGIN_FIELDS} } }`;
export const UPDATE = `mutation($i: UpdateWorkspacePluginInput!) { updateWorkspacePlugin(input: $i) { ${PLUGIN_FIELDS} } }`;
export const REMOVE = `mutation($id: ID!) { removeWorkspacePlugin(id: $id) { id } }`;

/** Uploads bundle bytes as `agent`; answers the sha256 (the upload must succeed). */
export async function uploadBundle(
  t: TestApp,
  agent: Agent,
  serverId: string,
  bytes: Buffer,
): Promise<string> {
  const res = await t.inject({
    method: 'POST',
    url: `/api/plugin-bundles/${serverId}`,
    headers: { 'content-type': BUNDLE_TYPE, ...agentHeaders(agent) },
    payload: bytes,
  });
  expect([200, 201], res.body).toContain(res.statusCode);
  return res.json().sha256 as string;
}
