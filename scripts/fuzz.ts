import { buildFuzzWorld } from '../test/security/_fuzz-world.js';
import { fuzzAll } from '../test/security/fuzz-targets.js';

// The longer fuzzing run (issue 48, item 6): every target of test/security/fuzz-targets.ts for
// the given seconds each (default 30) on a fresh SQLite test app. `npm run fuzz -- 120 [seed]`.

const seconds = Number(process.argv[2] ?? 30);
const seed = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error('usage: npm run fuzz -- [seconds per parser, default 30] [seed]');
  process.exitCode = 2;
} else {
  const w = await buildFuzzWorld();
  try {
    const runs = await fuzzAll(w, { ms: seconds * 1000 }, seed);
    for (const [name, r] of Object.entries(runs)) {
      console.log(
        `${r.runs}\t${name}\tkept ${r.retainedMiB.toFixed(1)} MiB, peak +${r.peakMiB.toFixed(1)} MiB`,
      );
    }
    console.log('fuzz: no finding, every parser within its memory bounds');
  } catch (err) {
    console.error(String(err instanceof Error ? err.message : err));
    process.exitCode = 1;
  } finally {
    await w.close();
  }
}
