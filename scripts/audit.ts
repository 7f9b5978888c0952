import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The dependency audit CI runs (docs/security.md, "Dependencies"): `npm audit --omit=dev`, every
// advisory it reports either fixed or listed in .ci/audit-allowlist.json with the reason it does
// not apply. When the registry gives no audit (unreachable, or a mirror without the audit
// endpoint) the run says so and passes: a network fault is not a finding.

export interface AllowEntry {
  /** The advisory: its GHSA id or URL as npm audit reports it. */
  advisory: string;
  package: string;
  why: string;
}

export interface Advisory {
  advisory: string;
  package: string;
  severity: string;
  title: string;
}

export type AuditVerdict =
  { kind: 'skipped'; reason: string } | { kind: 'checked'; problems: string[]; stale: string[] };

/** The advisories of an `npm audit --json` report (npm 7 and later), one per advisory. */
export function advisoriesOf(report: Record<string, unknown>): Advisory[] {
  const out = new Map<string, Advisory>();
  const vulnerabilities = (report.vulnerabilities ?? {}) as Record<string, { via?: unknown[] }>;
  for (const [name, v] of Object.entries(vulnerabilities)) {
    for (const via of v.via ?? []) {
      // A string names another vulnerable package (reported under its own name).
      if (!via || typeof via !== 'object') continue;
      const a = via as { url?: string; source?: number; title?: string; severity?: string };
      const url = a.url ?? String(a.source ?? 'unknown');
      const id = /GHSA-[\w-]+/.exec(url)?.[0] ?? url;
      out.set(`${id} ${name}`, {
        advisory: id,
        package: name,
        severity: a.severity ?? 'unknown',
        title: a.title ?? '',
      });
    }
  }
  return [...out.values()];
}

/** Judges a report (the parsed JSON npm audit printed) against the allowlist. */
export function judgeAudit(report: unknown, allow: readonly AllowEntry[]): AuditVerdict {
  const r = (report ?? {}) as Record<string, unknown>;
  if (!('vulnerabilities' in r)) {
    const error = (r.error ?? {}) as { code?: string; summary?: string };
    const reason =
      error.code || error.summary
        ? `${error.code ?? ''} ${error.summary ?? ''}`.trim()
        : typeof r.message === 'string'
          ? r.message
          : 'npm audit printed no report';
    return { kind: 'skipped', reason };
  }
  const problems: string[] = [];
  for (const e of allow) {
    if (!e.advisory || !e.package || !e.why || e.why.trim().length < 20) {
      problems.push(
        `allowlist entry ${JSON.stringify(e)}: give the advisory, the package and why it does not apply (a sentence)`,
      );
    }
  }
  const found = advisoriesOf(r);
  const listed = (a: Advisory) =>
    allow.some((e) => e.advisory === a.advisory && e.package === a.package);
  for (const a of found.filter((x) => !listed(x))) {
    problems.push(
      `${a.package}: ${a.severity} ${a.advisory} ${a.title} (upgrade it, or list it in .ci/audit-allowlist.json with why it does not apply)`,
    );
  }
  const stale = allow
    .filter((e) => !found.some((a) => a.advisory === e.advisory && a.package === e.package))
    .map((e) => `${e.package} ${e.advisory}`);
  return { kind: 'checked', problems, stale };
}

async function runAudit(root: string): Promise<unknown> {
  const out = await new Promise<string>((resolve) => {
    // npm audit exits 1 when it finds something; the JSON is what counts.
    execFile(
      'npm',
      ['audit', '--omit=dev', '--json'],
      { cwd: root, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (_err, stdout) => resolve(stdout),
    );
  });
  try {
    return JSON.parse(out) as unknown;
  } catch {
    return { message: `npm audit printed no JSON: ${out.slice(0, 200)}` };
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const allow = (
    JSON.parse(fs.readFileSync(path.join(root, '.ci/audit-allowlist.json'), 'utf8')) as {
      allowed: AllowEntry[];
    }
  ).allowed;
  const verdict = judgeAudit(await runAudit(root), allow);
  if (verdict.kind === 'skipped') {
    console.log(`audit: skipped, the registry gave no audit (${verdict.reason})`);
  } else {
    for (const s of verdict.stale) {
      console.log(`audit: ${s} is no longer reported; remove it from .ci/audit-allowlist.json`);
    }
    for (const p of verdict.problems) console.error(`audit: ${p}`);
    if (verdict.problems.length > 0) process.exitCode = 1;
    else console.log(`audit: no advisory outside the allowlist (${allow.length} allowed)`);
  }
}
