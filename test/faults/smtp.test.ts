import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type TestApp } from '../_util/app.js';
import { FaultProxy, sleep } from '../_util/fault-proxy.js';
import { signUpAndIn } from '../_util/seed.js';
import { startSmtp } from '../_util/smtp.js';

const REQUEST = 'mutation($l: String!) { requestPasswordReset(input: { emailOrUsername: $l }) }';

// Mail does not depend on the database: run once, in the SQLite project.
describe.skipIf(TEST_DB !== 'sqlite')('SMTP failures', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let proxy: FaultProxy;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await startSmtp();
    proxy = await FaultProxy.start('127.0.0.1', smtp.port);
    t = await createTestApp({
      env: {
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(proxy.port),
        SVC_SMTP_FROM: 'svc <noreply@example.org>',
      },
    });
    await signUpAndIn(t, { username: 'mailer', email: 'mailer@example.org' });
  });

  afterAll(async () => {
    await proxy?.pass();
    await t?.close();
    await proxy?.close();
    await smtp?.close();
  });

  it('answers while SMTP refuses or stalls, logs the failure, and mails again once back', async () => {
    await proxy.refuse();
    const started = Date.now();
    const refused = await t.gql(REQUEST, { l: 'mailer' });
    expect(refused.body.data?.requestPasswordReset).toBe(true);
    for (let i = 0; i < 100 && !t.logs.lines.some((l) => l.level === 50); i++) await sleep(20);
    expect(t.logs.lines.some((l) => l.level === 50 && /mail/.test(String(l.msg)))).toBe(true);

    await proxy.pass();
    proxy.stall();
    const stalled = await t.gql(REQUEST, { l: 'mailer' });
    expect(stalled.body.data?.requestPasswordReset).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);

    await proxy.pass();
    const before = smtp.messages.length;
    expect((await t.gql(REQUEST, { l: 'mailer' })).body.data?.requestPasswordReset).toBe(true);
    for (let i = 0; i < 200 && smtp.messages.length <= before; i++) await sleep(25);
    expect(smtp.messages.length).toBeGreaterThan(before);
  });
});
