import { createTestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import type { FuzzWorld } from './fuzz-targets.js';

/** A test app with one signed-in owner of one workspace, for the fuzz targets. */
export async function buildFuzzWorld(): Promise<FuzzWorld & { close(): Promise<void> }> {
  const t = await createTestApp({ env: { SVC_PUBLIC_BASE_URL: 'http://127.0.0.1:1' } });
  const agent = await signUpAndIn(t);
  const created = await t.gql(
    'mutation { createWorkspace(input: { name: "Fuzz" }) { id channels { id name } } }',
    {},
    agent,
  );
  const ws = created.body.data!.createWorkspace as { id: string; channels: Array<{ id: string }> };
  return {
    t,
    agent,
    workspace: ws.id,
    conversation: ws.channels[0]!.id,
    close: () => t.close(),
  };
}
