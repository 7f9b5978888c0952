import { it } from 'vitest';
import { createTestApp } from './_util/app.js';
import { recordQueries } from './conversations/_helpers.js';
import { loginWithKey, signUpWithKey } from './devices/_keys.js';
it('prints', async () => {
  const t = await createTestApp({ env: { SVC_OPEN_REGISTRATION: 'true' } });
  const account = await signUpWithKey(t);
  await loginWithKey(t, account.device, account.username);
  const texts = await recordQueries(() => loginWithKey(t, account.device, account.username));
  console.log(texts.map((s) => s.slice(0, 160)).join('\n'));
  await t.close();
});
