// Reference: the bare insert loop. CLIENTS loops insert for SECONDS; prints one JSON line.
import { openStore } from './message-store.js';

const clients = Number(process.env.CLIENTS ?? 8);
const seconds = Number(process.env.SECONDS ?? 5);
const store = await openStore();
const cpu0 = process.cpuUsage();
const latencies: number[] = [];
const end = performance.now() + seconds * 1000;
await Promise.all(
  Array.from({ length: clients }, async (_, c) => {
    while (performance.now() < end) {
      const t = performance.now();
      await store.insert(`conv-${c}`, 'hello from the bare insert loop');
      latencies.push(performance.now() - t);
    }
  }),
);
const cpu = process.cpuUsage(cpu0);
await store.close();
latencies.sort((a, b) => a - b);
const p99 = latencies[Math.max(0, Math.ceil(latencies.length * 0.99) - 1)] ?? 0;
process.stdout.write(
  `${JSON.stringify({
    inserted: latencies.length,
    perSecond: latencies.length / seconds,
    p99,
    cpuS: (cpu.user + cpu.system) / 1e6,
  })}\n`,
);
