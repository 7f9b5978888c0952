import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { findBinary, ROOT } from './_binaries.js';

// podman for the deployment tests, in a storage of its own that later runs reuse (the Debian base
// and the image's dependency layers are built once), set up for machines like the CI's:
// - runc, when installed, rather than crun: crun refuses a host whose cgroups are in hybrid mode
//   ("crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2");
// - cgroups managed by podman itself (no systemd as process 1 to ask);
// - resource limits no higher than the host's: podman raises a container's open files and
//   processes to the maximum by default, which a manager without CAP_SYS_RESOURCE may not do
//   ("setrlimit RLIMIT_NOFILE: Operation not permitted").

export const PODMAN = findBinary('podman');
export const DEBOOTSTRAP = findBinary('debootstrap');
const RUNC = findBinary('runc');

/** Why the image cannot be built here, or ''. */
export function missingTools(): string {
  if (!PODMAN) return 'podman is not installed; .ci/packages installs it';
  if (!DEBOOTSTRAP) return 'debootstrap is not installed; .ci/packages installs it';
  if (process.getuid?.() !== 0) return 'debootstrap needs root';
  return '';
}

/** Whether a test that builds images is skipped for `missing`: never in CI, where it fails. */
export const skipped = (missing: string) => missing !== '' && process.env.CI !== 'true';

/** svc's image as the tests build it (container.test.ts, compose-up.test.ts). */
export const SVC_IMAGE = 'localhost/svc:test';

/** Where the storage, the Debian base's tarball and the settings are kept between runs. */
export const CACHE =
  process.env.SVC_CONTAINER_TEST_CACHE ?? path.join(os.homedir(), '.cache/svc-container-test');

/** The offline base (deploy/container/offline-base.sh) the tests build the image on. */
export const BASE = 'localhost/svc-base:trixie';

/** The hard limit of `name` in /proc/self/limits ("Max open files"), or null when unlimited. */
function hardLimit(name: string): number | null {
  const line = fs
    .readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(name));
  const hard = line?.slice(name.length).trim().split(/\s+/)[1];
  return hard === undefined || hard === 'unlimited' ? null : Number(hard);
}

function settings(): string {
  const file = path.join(CACHE, 'containers.conf');
  const nofile = Math.min(hardLimit('Max open files') ?? 65536, 65536);
  const text = [
    '[containers]',
    `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=4096:4096"]`,
    '[engine]',
    'cgroup_manager = "cgroupfs"',
    ...(RUNC ? [`runtime = "${RUNC}"`] : []),
    '',
  ].join('\n');
  fs.mkdirSync(CACHE, { recursive: true });
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text) fs.writeFileSync(file, text);
  return file;
}

/** podman's global options: the test's own storage. */
export function globalOptions(): string[] {
  return [
    '--root',
    path.join(CACHE, 'storage'),
    '--runroot',
    path.join(os.tmpdir(), 'svc-container-test-run'),
  ];
}

export interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/**
 * Runs podman with `args` to its end (or kills it after `timeoutMs`). `input` is written to its
 * standard input. Low priority (nice 10): a build shares the machine with other tests.
 */
export function podman(
  args: string[],
  options: { input?: string; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<Ran> {
  return run('nice', ['-n', '10', PODMAN!, ...globalOptions(), ...args], options);
}

export function run(
  command: string,
  args: string[],
  options: { input?: string; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, CONTAINERS_CONF: settings(), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Runs podman and returns its standard output; throws with its error output when it fails. */
export async function podmanOk(
  args: string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const r = await podman(args, options);
  if (r.code !== 0) {
    throw new Error(`podman ${args.join(' ')} exited ${r.code}:\n${r.err.slice(-4000)}`);
  }
  return r.out;
}

/**
 * The Debian base, made once with deploy/container/offline-base.sh (debootstrap) and kept in the
 * storage; the root file system's tarball is kept too, for a storage that was removed. The
 * machine's own additions to its trust store (Debian keeps them in /usr/local/share/ca-certificates)
 * go into the base, so the image's npm reaches the registry the way the machine's does.
 */
export async function ensureBase(): Promise<void> {
  await locked(() => makeBase());
}

async function makeBase(): Promise<void> {
  if ((await podman(['image', 'exists', BASE])).code === 0) return;
  const extra = '/usr/local/share/ca-certificates';
  const cas = fs.existsSync(extra)
    ? fs
        .readdirSync(extra)
        .filter((f) => f.endsWith('.crt'))
        .map((f) => path.join(extra, f))
    : [];
  const r = await run(path.join(ROOT, 'deploy/container/offline-base.sh'), [BASE], {
    timeoutMs: 15 * 60_000,
    env: {
      CACHE: path.join(CACHE, 'base'),
      CA_FILES: cas.join(' '),
      PODMAN: [PODMAN!, ...globalOptions()].join(' '),
    },
  });
  if (r.code !== 0) throw new Error(`offline-base.sh exited ${r.code}:\n${r.out}\n${r.err}`);
}

/**
 * Builds the repository's Containerfile on the offline base as `tag`. The build stage is tagged
 * too (and with it the dependencies' stage it starts from), so their layers stay as the cache of
 * the next build while what older builds left is removed (`image prune`).
 */
export async function buildImage(tag: string): Promise<void> {
  await locked(() => build(tag));
}

async function build(tag: string): Promise<void> {
  const common = [
    'build',
    '--format',
    'docker',
    '--build-arg',
    `BASE=${BASE}`,
    '-f',
    'Containerfile',
  ];
  await podmanOk([...common, '--target', 'build', '-t', `${tag}-build`, '.'], {
    timeoutMs: 25 * 60_000,
  });
  await podmanOk([...common, '-t', tag, '.'], { timeoutMs: 10 * 60_000 });
  await podman(['image', 'prune', '--force'], { timeoutMs: 5 * 60_000 });
}

/**
 * Builds deploy/container/`name`/Containerfile (PostgreSQL, Redis or Caddy from Debian's
 * packages) on the offline base as `tag`; its package layer stays as the next build's cache.
 */
export async function buildOffline(name: string, tag: string): Promise<void> {
  await locked(() =>
    podmanOk(
      [
        'build',
        '--format',
        'docker',
        '--build-arg',
        `BASE=${BASE}`,
        '-t',
        tag,
        `deploy/container/${name}`,
      ],
      { timeoutMs: 15 * 60_000 },
    ),
  );
}

/**
 * Runs `work` while no other test process builds in the storage: two builds at once would each
 * do the work, and one's `image prune` could take the layers the other is making.
 */
export async function locked<T>(work: () => Promise<T>): Promise<T> {
  const lock = path.join(CACHE, 'build.lock');
  const owner = path.join(lock, 'pid');
  fs.mkdirSync(CACHE, { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(owner, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const taken = fs.statSync(lock, { throwIfNoEntry: false });
    if (!taken) continue;
    let pid = 0;
    try {
      pid = Number(fs.readFileSync(owner, 'utf8'));
    } catch {
      // Not written yet, or the lock just released.
    }
    // No owner written: taken an instant ago, or left by a process that died at that instant.
    const stale = pid > 0 ? !alive(pid) : Date.now() - taken.mtimeMs > 60_000;
    if (stale) fs.rmSync(lock, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  try {
    return await work();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Whether process `pid` runs. */
export function alive(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
