import { inspect } from 'node:util';

import pino from 'pino';
import { describe, expect, it } from 'vitest';

import { loadConfig } from './index.js';
import { loadSecrets } from './secrets.js';

const env = {
  SVC_DATABASE_URL: 'postgres://svc:db-pass-123@db.example:5432/svc',
  SVC_REDIS_URL: 'redis://:redis-pass-456@cache.example:6379',
  SVC_SMTP_HOST: 'smtp.example',
  SVC_SMTP_FROM: 'svc@example.org',
  SVC_SMTP_USER: 'svc',
  SVC_SMTP_PASSWORD: 'smtp-pass-789',
};
const values = ['db-pass-123', 'redis-pass-456', 'smtp-pass-789'];

describe('secrets', () => {
  it('are read from the environment apart from the config', () => {
    const secrets = loadSecrets(env);
    expect(secrets.databaseUrl).toBe(env.SVC_DATABASE_URL);
    expect(secrets.redisUrl).toBe(env.SVC_REDIS_URL);
    expect(secrets.smtpPassword).toBe(env.SVC_SMTP_PASSWORD);
    const config = JSON.stringify(loadConfig(env));
    for (const value of values) expect(config).not.toContain(value);
  });

  it.each([
    ['JSON', (s: unknown) => JSON.stringify(s)],
    ['inspect', (s: unknown) => inspect(s, { depth: 5 })],
    ['template', (s: unknown) => `${String(s)}`],
    [
      'a log line',
      (s: unknown) => {
        let line = '';
        pino({}, { write: (chunk: string) => (line += chunk) }).info({ secrets: s }, 'x');
        return line;
      },
    ],
  ])('never show their values in %s', (_how, show) => {
    const shown = show(loadSecrets(env));
    for (const value of values) expect(shown).not.toContain(value);
    expect(shown).toContain('[redacted]');
  });

  it('refuse a malformed value like the config does', () => {
    expect(() => loadSecrets({ SVC_DATABASE_URL: 'mysql://x' })).toThrow(/SVC_DATABASE_URL/);
  });
});
