// Solves a registration proof of work off the page's thread.
import { solvePow } from './pow-math.ts';

self.onmessage = (ev: MessageEvent<{ salt: string; bits: number }>) => {
  const { salt, bits } = ev.data;
  const nonce = solvePow(salt, bits, (tried) => self.postMessage({ progress: tried }));
  self.postMessage({ nonce });
};
