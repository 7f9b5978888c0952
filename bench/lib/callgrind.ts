import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import type { Launch } from './svc.js';

const run = promisify(execFile);

/**
 * Instruction counts of a server process, by `valgrind --tool=callgrind`: what a request costs
 * in instructions, the same from run to run whatever else the machine does (a CPU-seconds
 * figure on a shared 2-core machine moves by a third between runs). What the kernel does for
 * the process (its system calls) is not counted.
 *
 * The process starts with counting off (`--instr-atstart=no`), so start-up and warm-up run
 * at valgrind's uninstrumented speed; `measure` turns it on around the requests it is given and
 * writes one dump per measurement. V8's compiled code has no symbols: node runs with
 * `--perf-basic-prof`, and the addresses valgrind names such code by are looked up in the map
 * node writes (/tmp/perf-<pid>.map).
 */
export function callgrindLaunch(dir: string): { launch: Launch; nodeArgs: string[] } {
  return {
    launch: {
      wrap: [
        'valgrind',
        '--tool=callgrind',
        '--instr-atstart=no',
        `--callgrind-out-file=${path.join(dir, 'callgrind.out.%p')}`,
      ],
      // Start-up under valgrind takes tens of seconds on this machine.
      readyTimeoutMs: 600_000,
    },
    nodeArgs: ['--perf-basic-prof'],
  };
}

export interface Profile {
  /** All instructions the process ran between the measurement's start and end. */
  total: number;
  /** Self instructions by function (JavaScript functions named from node's perf map). */
  byFunction: Map<string, number>;
  /** Instructions of each function's calls (inclusive), by its callers: who makes a builtin run. */
  callers: Map<string, Map<string, number>>;
}

/** Counts the instructions of `pid` while `work` runs (nothing else should talk to it). */
export async function measure(
  pid: number,
  dir: string,
  name: string,
  work: () => Promise<void>,
): Promise<Profile> {
  await run('callgrind_control', ['--instr=on', String(pid)]);
  await run('callgrind_control', ['--zero', String(pid)]);
  await work();
  const before = new Set(fs.readdirSync(dir));
  await run('callgrind_control', [`--dump=${name.replace(/[^\w-]+/g, '-')}`, String(pid)]);
  await run('callgrind_control', ['--instr=off', String(pid)]);
  let dump: string | undefined;
  for (let i = 0; i < 100 && !dump; i += 1) {
    dump = fs.readdirSync(dir).find((f) => !before.has(f) && f.startsWith('callgrind.out.'));
    if (!dump) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!dump) throw new Error(`callgrind wrote no dump for ${name}`);
  return parse(fs.readFileSync(path.join(dir, dump), 'utf8'), perfMap(pid));
}

/** node's perf map: address ranges of compiled JavaScript, later entries over earlier ones. */
function perfMap(pid: number): Array<{ start: number; end: number; name: string }> {
  const file = `/tmp/perf-${pid}.map`;
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start, size, ...rest] = line.split(' ');
      const s = parseInt(start as string, 16);
      return { start: s, end: s + parseInt(size as string, 16), name: rest.join(' ') };
    });
}

/**
 * Self cost per function from a callgrind dump (format: valgrind's "Callgrind Format
 * Specification"). Names are compressed as `fn=(id) name` on first use and `fn=(id)` after, shared
 * with `cfn=`; the cost line after a `calls=` line is the call's inclusive cost, not self cost.
 */
function parse(text: string, map: ReturnType<typeof perfMap>): Profile {
  const names = new Map<string, string>();
  const byFunction = new Map<string, number>();
  const callers = new Map<string, Map<string, number>>();
  let total = 0;
  let current = '';
  let callee = '';
  let skipNext = false;
  const resolve = (raw: string): string => {
    const address = /^0x([0-9a-f]+)/.exec(raw);
    if (!address) return raw;
    const a = parseInt(address[1] as string, 16);
    for (let i = map.length - 1; i >= 0; i -= 1) {
      const e = map[i]!;
      if (a >= e.start && a < e.end) return e.name;
    }
    return 'unnamed code';
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=') || line.startsWith('cfn=')) {
      const m = /^c?fn=\((\d+)\)(?: (.*))?$/.exec(line);
      if (!m) continue;
      if (m[2] !== undefined) names.set(m[1] as string, resolve(m[2].replace(/'\d+$/, '')));
      if (line.startsWith('fn=')) current = names.get(m[1] as string) ?? '?';
      else callee = names.get(m[1] as string) ?? '?';
      continue;
    }
    if (line.startsWith('calls=')) {
      skipNext = true;
      continue;
    }
    if (line.startsWith('summary:') || line.startsWith('totals:')) {
      total = Number(line.split(/\s+/)[1]);
      continue;
    }
    if (!/^[0-9+*-]/.test(line)) continue;
    if (skipNext) {
      skipNext = false;
      let by = callers.get(callee);
      if (!by) callers.set(callee, (by = new Map()));
      by.set(current, (by.get(current) ?? 0) + Number(line.split(' ')[1] ?? 0));
      continue;
    }
    const cost = Number(line.split(' ')[1] ?? 0);
    byFunction.set(current, (byFunction.get(current) ?? 0) + cost);
  }
  return { total, byFunction, callers };
}

/** Where a function's instructions belong, for the breakdown: a package, V8's part, or native. */
export function category(fn: string): string {
  if (fn.startsWith('JS:') || fn.startsWith('LazyCompile:') || fn.startsWith('Function:')) {
    const file = fn.split(' ').slice(1).join(' ');
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    if (pkg) return pkg[1] as string;
    // The build writes dist.build-<hash>/, which dist links to.
    if (/\/dist(?:\.build-[0-9a-f]+)?\//.test(file)) return 'svc';
    if (file.startsWith('node:')) return 'node (JavaScript)';
    return 'other JavaScript';
  }
  if (fn.startsWith('Builtin:') || fn.startsWith('Builtins_') || fn.startsWith('BytecodeHandler:'))
    return 'V8 builtins';
  if (fn.startsWith('RegExp:')) return 'V8 regular expressions';
  if (fn === 'unnamed code') return 'unnamed code';
  if (/Heap|Scaveng|Mark|Sweep|Evacuat|Compact|GC|Marking/.test(fn)) return 'V8 garbage collection';
  if (/compiler::|maglev|Maglev|Turbofan|Compile/.test(fn)) return 'V8 compilers';
  if (fn.startsWith('v8::')) return 'V8 runtime';
  if (fn.startsWith('node::')) return 'node (C++)';
  if (fn.startsWith('uv_') || fn.startsWith('uv__')) return 'libuv';
  if (/^(sqlite3|sqlite)/.test(fn)) return 'SQLite';
  if (/^(EVP_|ossl_|OPENSSL|CRYPTO_|BN_|ED25519|x25519|sha|SHA|ecp_|bn_|fe_|ge_)/.test(fn))
    return 'OpenSSL';
  if (/^(mem|str|__mem|__str|malloc|free|_int_|cfree|calloc|realloc|__libc|pthread)/.test(fn))
    return 'libc';
  return 'other native';
}

/** Sums a profile's functions by `category`. */
export function byCategory(profile: Profile): Map<string, number> {
  const out = new Map<string, number>();
  for (const [fn, cost] of profile.byFunction) {
    const c = category(fn);
    out.set(c, (out.get(c) ?? 0) + cost);
  }
  return out;
}
