import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Row {
  [key: string]: string | number | boolean | null;
}

export interface ScenarioResult {
  scenario: string;
  database: 'sqlite' | 'postgres';
  rows: Row[];
  targets: { target: string; met: boolean; detail: string }[];
  notes?: string[];
}

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

export function machine(): Record<string, string | number> {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
  };
}

export function writeResult(result: ScenarioResult): string {
  const dir = path.join(root, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(
    dir,
    `${result.scenario}${result.database === 'postgres' ? '-pg' : ''}.json`,
  );
  fs.writeFileSync(
    file,
    `${JSON.stringify({ ...result, machine: machine(), at: new Date().toISOString() }, null, 2)}\n`,
  );
  return file;
}

const fmt = (v: Row[string]) =>
  typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : String(v);

export function printTable(result: ScenarioResult): void {
  const rows = result.rows;
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => fmt(r[c] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ');
  console.log(`\n== ${result.scenario} (${result.database})`);
  console.log(line(cols));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(cols.map((c) => fmt(r[c] ?? ''))));
  for (const t of result.targets)
    console.log(`${t.met ? 'MET   ' : 'MISSED'} ${t.target}: ${t.detail}`);
  for (const n of result.notes ?? []) console.log(`note: ${n}`);
}
