import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findBinary, ROOT } from './_binaries.js';

/** Which database this run is for (test/_util/app.ts, not imported: it loads the whole server). */
const TEST_DB = process.env.SVC_TEST_DB ?? 'sqlite';

// docs/operations.md, "As a systemd service": deploy/svc.service is a unit systemd accepts
// (`systemd-analyze verify`: no unknown key, no value it cannot parse, an ExecStart it can run),
// hardened (`systemd-analyze security --offline`: exposure at most 2.0 of 10), running as a
// user of its own with its data in its state directory. Skipped, with a line saying so, where
// systemd-analyze is not installed. Run once, on SQLite: no database plays a part.

const ANALYZE = findBinary('systemd-analyze');
const SKIP = ANALYZE ? '' : ' (skipped: systemd-analyze is not installed; Debian: systemd)';

const UNIT = fs.readFileSync(path.join(ROOT, 'deploy/svc.service'), 'utf8');

/** The values of `key` in the unit, in order (a key may be given more than once). */
function values(unit: string, key: string): string[] {
  return [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!.trim());
}

describe.skipIf(!ANALYZE || TEST_DB !== 'sqlite')(`the systemd unit in deploy/${SKIP}`, () => {
  let dir: string;

  /** Runs systemd-analyze on `text` saved as svc.service. */
  function analyze(args: string[], text: string) {
    let unit = text;
    // verify checks that ExecStart's program exists: where Node.js is elsewhere, point at it.
    if (!fs.existsSync('/usr/bin/node')) unit = unit.replaceAll('/usr/bin/node', process.execPath);
    const file = path.join(dir, 'svc.service');
    fs.writeFileSync(file, unit);
    const r = spawnSync(ANALYZE!, [...args, file], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, SYSTEMD_LOG_COLOR: '0', SYSTEMD_PAGER: 'cat' },
    });
    return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
  }

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-unit-'));
  });

  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('passes systemd-analyze verify without a word', () => {
    expect(analyze(['verify'], UNIT)).toEqual({ status: 0, out: '' });
  });

  it('would be told of a key systemd does not know, or a program that is not there', () => {
    const typo = analyze(['verify'], UNIT.replace('NoNewPrivileges=', 'NoNewPrivilege='));
    expect(typo.out).toMatch(/Unknown key 'NoNewPrivilege'/);
    const missing = analyze(['verify'], UNIT.replace(/^ExecStart=\S+/m, 'ExecStart=/nonexistent'));
    expect(missing.status).not.toBe(0);
  });

  it('is hardened: exposure at most 2.0 in systemd-analyze security', () => {
    const r = analyze(['security', '--offline=yes', '--no-pager'], UNIT);
    const level = /Overall exposure level for svc\.service: ([\d.]+)/.exec(r.out)?.[1];
    expect(level, r.out).toBeDefined();
    expect(Number(level)).toBeLessThanOrEqual(2.0);
  });

  it('runs as a user of its own, with its data in its state directory, and stops on SIGTERM', () => {
    expect(values(UNIT, 'DynamicUser')).toEqual(['yes']);
    expect(values(UNIT, 'NoNewPrivileges')).toEqual(['yes']);
    expect(values(UNIT, 'ProtectSystem')).toEqual(['strict']);
    const state = values(UNIT, 'StateDirectory');
    expect(state).toEqual(['svc']);
    const env = values(UNIT, 'Environment').join(' ');
    expect(env).toContain(`SVC_DATA_DIR=/var/lib/${state[0]}`);
    expect(values(UNIT, 'KillSignal')).toEqual(['SIGTERM']);
    expect(values(UNIT, 'ExecStart')[0]).toMatch(/ \/opt\/svc\/dist\/cli\/index\.js serve$/);
    expect(fs.existsSync(path.join(ROOT, 'src/cli/index.ts'))).toBe(true);
  });
});
