import { describe, expect, it } from 'vitest';

import { judgeAudit, type AllowEntry } from '../../scripts/audit.js';

// scripts/audit.ts, the dependency audit CI runs: a report is judged against the allowlist; a
// registry that gives no audit is a skip, not a failure.

/** An `npm audit --json` report (npm 10 and 11) with one advisory on `pkg`. */
const report = (pkg: string, ghsa: string) => ({
  auditReportVersion: 2,
  vulnerabilities: {
    [pkg]: {
      name: pkg,
      severity: 'high',
      via: [
        {
          source: 1100000,
          name: pkg,
          title: 'Prototype pollution',
          url: `https://github.com/advisories/${ghsa}`,
          severity: 'high',
        },
      ],
    },
    dependent: { name: 'dependent', severity: 'high', via: [pkg] },
  },
});

const entry: AllowEntry = {
  advisory: 'GHSA-aaaa-bbbb-cccc',
  package: 'pkg',
  why: 'svc never passes user input to the vulnerable function (only build scripts call it)',
};

describe('the dependency audit', () => {
  it('fails on an advisory the allowlist does not name, saying what to do', () => {
    const v = judgeAudit(report('pkg', 'GHSA-aaaa-bbbb-cccc'), []);
    expect(v).toEqual({
      kind: 'checked',
      problems: [expect.stringMatching(/^pkg: high GHSA-aaaa-bbbb-cccc .*audit-allowlist/)],
      stale: [],
    });
  });

  it('passes an advisory the allowlist names with a reason, and flags entries gone stale', () => {
    expect(judgeAudit(report('pkg', 'GHSA-aaaa-bbbb-cccc'), [entry])).toEqual({
      kind: 'checked',
      problems: [],
      stale: [],
    });
    expect(judgeAudit({ vulnerabilities: {} }, [entry])).toEqual({
      kind: 'checked',
      problems: [],
      stale: ['pkg GHSA-aaaa-bbbb-cccc'],
    });
  });

  it('refuses an allowlist entry without a reason', () => {
    const v = judgeAudit(report('pkg', 'GHSA-aaaa-bbbb-cccc'), [{ ...entry, why: 'n/a' }]);
    expect(v.kind === 'checked' && v.problems[0]).toMatch(/why it does not apply/);
  });

  it('skips, saying why, when the registry gives no audit', () => {
    expect(judgeAudit({ error: { code: 'ENOTFOUND', summary: 'getaddrinfo failed' } }, [])).toEqual(
      { kind: 'skipped', reason: 'ENOTFOUND getaddrinfo failed' },
    );
    // A registry mirror without the audit endpoint answers 405.
    const mirror = {
      message: '405 Method Not Allowed - POST https://registry/-/npm/v1/security/advisories/bulk',
      statusCode: 405,
    };
    expect(judgeAudit(mirror, [])).toEqual({ kind: 'skipped', reason: mirror.message });
  });
});
