import { CLI_ACTOR } from '../../src/auth/actor.js';

import type { Agent, TestApp } from './app.js';
import { setCookies } from './app.js';

let counter = 0;
const uniqueName = (prefix: string) =>
  `${prefix}${Date.now().toString(36).slice(-4)}${(counter++).toString(36)}`;

export const DEFAULT_PASSWORD = 'correct horse battery staple';

/** Creates a password account through the service and signs it in through POST /api. */
export async function signUpAndIn(
  t: TestApp,
  opts: { username?: string; password?: string; email?: string; operator?: boolean } = {},
): Promise<Agent> {
  const username = opts.username ?? uniqueName('user');
  const password = opts.password ?? DEFAULT_PASSWORD;
  const account = await t.ctx.services.accounts.createPasswordAccount({
    username,
    password,
    email: opts.email ?? null,
  });
  if (opts.operator) await t.ctx.services.accounts.setOperatorByUsername(CLI_ACTOR, username, true);
  return signIn(t, username, password, account.id);
}

/** Signs an existing account in and returns its agent. */
export async function signIn(
  t: TestApp,
  username: string,
  password = DEFAULT_PASSWORD,
  id?: string,
): Promise<Agent> {
  const res = await t.gql(
    'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken user { id } } }',
    { u: username, p: password },
  );
  if (!res.body.data?.login) throw new Error(`login failed: ${JSON.stringify(res.body.errors)}`);
  const cookies = setCookies(res.response);
  return {
    id: id ?? res.body.data.login.user.id,
    username,
    cookies: { svc_session: cookies.svc_session!.value, svc_csrf: cookies.svc_csrf!.value },
    csrfToken: res.body.data.login.csrfToken,
  };
}
