import fs from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { FEATURE_NAMES, loadConfig, unknownVariables } from '../../src/config/index.js';
import { variables } from '../../src/config/variables.js';
import { cli } from '../cli/cli-io.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('configuration', () => {
  it('applies the contract defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.server).toEqual({ host: '127.0.0.1', port: 8080, publicBaseUrl: null, role: 'both' });
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.metricsAddr).toBeNull();
    expect(c.rates.apiMaxBatch).toBe(20);
    expect(c.rates.requestsPerMinPerIp).toBeNull();
    expect(c.rates.wsSessionRecheckSecs).toBe(30);
    expect(c.rates.wsWriteGatherMs).toBe(100);
    expect(c.sessionTtlDays).toBe(30);
    expect(c.accountDeletionGraceDays).toBe(14);
    expect(c.registration.signupRequiresKeys).toBe(true);
    expect(c.http.enableGraphiql).toBe(false);
    expect(c.limits.pendingInvitesPerUser).toBe(50);
    expect(c.limits.devicesPerUser).toBe(32);
    expect(c.limits.dmRequestsPerDay).toBe(20);
    expect(c.linkPreviewConcurrency).toBe(8);
    expect(c.features.map((f) => f.key)).toEqual([...FEATURE_NAMES]);
    expect(Object.isFrozen(c) && Object.isFrozen(c.server)).toBe(true);
  });

  it('treats an empty value like an unset one and 0 as "limit off"', () => {
    const c = loadConfig({
      SVC_SERVER_PORT: '',
      SVC_RATE_REQUESTS_PER_MIN_PER_IP: '0',
      SVC_LIMIT_PENDING_INVITES_PER_USER: '0',
    });
    expect(c.server.port).toBe(8080);
    expect(c.rates.requestsPerMinPerIp).toBeNull();
    expect(c.limits.pendingInvitesPerUser).toBeNull();
  });

  // Each bad value stops `svc serve` before anything opens: exit 2 and one message on stderr that
  // names the variable and says what it accepts.
  const bad: Array<[string, Record<string, string>, string[]]> = [
    [
      'not a number',
      { SVC_SERVER_PORT: 'eighty' },
      ['SVC_SERVER_PORT', 'whole number from 0 to 65535', '"eighty"'],
    ],
    [
      'a number out of range',
      { SVC_API_MAX_BATCH: '0' },
      ['SVC_API_MAX_BATCH', 'whole number from 1 to 1000'],
    ],
    [
      'a fraction',
      { SVC_RATE_REQUESTS_PER_MIN_PER_IP: '1.5' },
      ['SVC_RATE_REQUESTS_PER_MIN_PER_IP', 'whole number'],
    ],
    ['an unknown role', { SVC_ROLE: 'hub' }, ['SVC_ROLE', 'one of relay, host, both', '"hub"']],
    [
      'a malformed URL',
      { SVC_PUBLIC_BASE_URL: 'example.com' },
      ['SVC_PUBLIC_BASE_URL', 'absolute http:// or https:// URL'],
    ],
    [
      'a URL of the wrong scheme',
      { SVC_DATABASE_URL: 'mysql://db/svc' },
      ['SVC_DATABASE_URL', 'postgres:// or postgresql://'],
    ],
    [
      'a malformed Redis URL',
      { SVC_REDIS_URL: 'localhost:6379' },
      ['SVC_REDIS_URL', 'redis:// or rediss://'],
    ],
    [
      'a malformed CIDR',
      { SVC_RATE_EXEMPT_ADDRESSES: '10.0.0.0/8, 192.168.1.0/33' },
      ['SVC_RATE_EXEMPT_ADDRESSES', 'IP addresses or CIDR ranges', '192.168.1.0/33'],
    ],
    ['a malformed listen address', { SVC_METRICS_ADDR: '9090' }, ['SVC_METRICS_ADDR', 'host:port']],
    [
      'a malformed boolean',
      { SVC_TRUST_FORWARDED_HEADERS: 'maybe' },
      ['SVC_TRUST_FORWARDED_HEADERS', 'true or false'],
    ],
    [
      'an unknown DM floor',
      { SVC_DM_INBOUND: 'friends' },
      ['SVC_DM_INBOUND', 'anyone, shared_workspace, contacts'],
    ],
    [
      'a notice over 500 characters',
      { SVC_INSTANCE_NOTICE: 'x'.repeat(501) },
      ['SVC_INSTANCE_NOTICE', 'at most 500 characters'],
    ],
    [
      'an unknown feature',
      { SVC_FEATURES_DISABLED: 'attachments, video' },
      ['SVC_FEATURES_DISABLED', '"video"', `known features are ${FEATURE_NAMES.join(', ')}`],
    ],
  ];

  it.each(bad)(
    'stops boot on %s, naming the variable and what it accepts',
    async (_, env, parts) => {
      const run = await cli(['serve'], env);
      expect(run.code).toBe(2);
      expect(run.out).toBe('');
      expect(run.err.match(/^svc: /gm)).toHaveLength(1);
      for (const part of parts) expect(run.err).toContain(part);
    },
  );

  it('reports every problem at once', async () => {
    const run = await cli(['serve'], { SVC_SERVER_PORT: 'x', SVC_ROLE: 'y' });
    expect(run.code).toBe(2);
    expect(run.err).toContain('SVC_SERVER_PORT');
    expect(run.err).toContain('SVC_ROLE');
  });

  it('accepts an instance notice of exactly 500 characters (counted as characters)', () => {
    const notice = '\u{1F600}'.repeat(500);
    expect(loadConfig({ SVC_INSTANCE_NOTICE: notice }).instance.notice).toBe(notice);
  });

  it('names SVC_* variables it does not know (a misspelt one is otherwise silently ignored)', () => {
    expect(
      unknownVariables({
        SVC_SERVR_PORT: '1',
        SVC_SERVER_PORT: '2',
        SVC_TEST_DB: 'x',
        PATH: '/bin',
      }),
    ).toEqual(['SVC_SERVR_PORT']);
  });

  it('documents every variable in docs/configuration.md', () => {
    const guide = fs.readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
    const missing = Object.keys(variables).filter((name) => !guide.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('names in the README only variables the server reads (besides the test suite ones)', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const named = [...readme.matchAll(/\bSVC_[A-Z0-9_]*[A-Z0-9]\b/g)]
      .map((m) => m[0])
      .filter((name) => !name.startsWith('SVC_TEST_'));
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((name) => !Object.hasOwn(variables, name))).toEqual([]);
  });
});
