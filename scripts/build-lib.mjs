// How `npm run build` replaces dist/ without a moment where it is missing: a build that finds its
// inputs unchanged does nothing, and a rebuild goes into a fresh directory that a symlink swap
// puts in place. A concurrent `npm start` or `npx svc ...` always finds dist/cli/index.js, either
// the old build's or the new one's.
//
//   dist -> dist.build-<fingerprint>   (a relative symlink, replaced with one rename)
//
// The build directories sit beside dist/ so paths computed from a compiled module
// (`../../../dist/web` from dist/http/routes/) mean the same from either name.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Written inside each build: the fingerprint of the inputs it was built from. */
export const STAMP_FILE = '.build-stamp';

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git']);

/**
 * SHA-256 over the relative path and content of every file under `inputs` (files or folders,
 * relative to `root`; missing ones count as absent), in a stable order. Content rather than
 * modification times, so a checkout or a copy that keeps the sources does not rebuild.
 */
export function fingerprint(root, inputs) {
  const hash = createHash('sha256');
  const files = [];
  const walk = (rel) => {
    const abs = path.join(root, rel);
    let stat;
    try {
      stat = fs.statSync(abs);
    } catch {
      files.push([rel, null]);
      return;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) {
        if (!SKIP_DIRS.has(name)) walk(path.posix.join(rel, name));
      }
    } else if (stat.isFile()) {
      files.push([rel, abs]);
    }
  };
  for (const input of [...inputs].sort()) walk(input);
  for (const [rel, abs] of files) {
    hash.update(`${rel}\0`);
    hash.update(abs === null ? '\0absent' : fs.readFileSync(abs));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The fingerprint the current dist/ was built from, or null when it has none or is incomplete. */
export function currentStamp(root, entry = 'cli/index.js') {
  const dist = path.join(root, 'dist');
  if (!fs.existsSync(path.join(dist, entry))) return null;
  try {
    return fs.readFileSync(path.join(dist, STAMP_FILE), 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * Builds `root/dist` with `build(outDir)` unless the current build's stamp matches the inputs'
 * fingerprint (or `force`). The new build is made in `dist.tmp-<pid>`, renamed to
 * `dist.build-<fingerprint>`, and `dist` is swapped to it by renaming a new symlink over the old
 * one. The previous build is kept (a running server may still read from it); older ones (but not
 * those finished within `keepRecentMs`, which a concurrent build may be about to swap in) and
 * leftovers of interrupted builds are removed.
 */
export async function buildIfChanged({
  root,
  inputs,
  build,
  force = false,
  entry = 'cli/index.js',
  pid = process.pid,
  keepRecentMs = RECENT_MS,
}) {
  const stamp = fingerprint(root, inputs);
  if (!force && currentStamp(root, entry) === stamp) return { built: false, stamp };

  const tmpName = `dist.tmp-${pid}`;
  const tmp = path.join(root, tmpName);
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp);
  try {
    await build(tmp);
    if (!fs.existsSync(path.join(tmp, entry))) {
      throw new Error(`the build wrote no ${entry}`);
    }
    fs.writeFileSync(path.join(tmp, STAMP_FILE), `${stamp}\n`);
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw error;
  }

  // A forced rebuild of the same inputs, or a concurrent build that finished first, may have
  // made this name already: the one in place stays (a server may be reading it).
  let finalName = `dist.build-${stamp.slice(0, 16)}`;
  const dist = path.join(root, 'dist');
  const before = linkTarget(dist);
  if (before === finalName) finalName = `${finalName}-${pid}`;
  try {
    fs.renameSync(tmp, path.join(root, finalName));
  } catch (error) {
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const previous = swapLink(root, finalName, pid) ?? before;
  prune(root, new Set([finalName, previous].filter(Boolean)), keepRecentMs);
  return { built: true, stamp, dir: finalName };
}

/** What the `dist` symlink points to (a name beside it), or null when it is not a symlink. */
function linkTarget(dist) {
  try {
    return fs.readlinkSync(dist);
  } catch {
    return null;
  }
}

/**
 * Points `root/dist` at `target` with one rename. A plain dist/ folder (made by an older build
 * script) moves aside first; its new name is returned.
 */
function swapLink(root, target, pid) {
  const dist = path.join(root, 'dist');
  const link = path.join(root, `dist.link-${pid}`);
  fs.rmSync(link, { force: true });
  fs.symlinkSync(target, link, 'dir');
  let stat = null;
  try {
    stat = fs.lstatSync(dist);
  } catch {
    // No dist yet.
  }
  if (stat && !stat.isSymbolicLink()) {
    // Once, when moving from a plain folder: rename cannot replace a non-empty directory, so
    // it moves aside first (the only moment dist/ is missing) and is kept as the previous build.
    const aside = `dist.old-${pid}`;
    fs.renameSync(dist, path.join(root, aside));
    fs.renameSync(link, dist);
    return aside;
  }
  fs.renameSync(link, dist);
  return null;
}

/** A build finished this recently may be about to be swapped in by a concurrent build. */
const RECENT_MS = 10 * 60 * 1000;

/**
 * Removes build directories beside dist/ except `keep`, recent ones, and those of processes
 * still running (their build or swap is under way).
 */
function prune(root, keep, keepRecentMs) {
  const now = Date.now();
  for (const name of fs.readdirSync(root)) {
    const m = /^dist\.(build|old|tmp|link)-(.+)$/.exec(name);
    if (!m || keep.has(name)) continue;
    const abs = path.join(root, name);
    if (m[1] === 'tmp' || m[1] === 'link') {
      const owner = Number(m[2]);
      if (Number.isInteger(owner) && alive(owner)) continue;
    } else if (m[1] === 'build') {
      const stamped = fs.statSync(path.join(abs, STAMP_FILE), { throwIfNoEntry: false });
      if (stamped && now - stamped.mtimeMs < keepRecentMs) continue;
    }
    fs.rmSync(abs, { recursive: true, force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}
