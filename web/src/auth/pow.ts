import { gql } from '../api/graphql.ts';
import { REGISTRATION_CHALLENGE } from '../api/queries.ts';

interface Challenge {
  challengeId: string;
  salt: string;
  bits: number;
  expiresAt: string;
}

/**
 * Fetches a registration challenge and solves it in a worker; null when the server asks for
 * none. `progress` hears how many hashes were tried so far.
 */
export async function proofOfWork(
  progress: (tried: number, bits: number) => void,
): Promise<{ challengeId: string; nonce: string } | null> {
  const d = await gql<{ registrationChallenge: Challenge | null }>(REGISTRATION_CHALLENGE);
  const c = d.registrationChallenge;
  if (!c) return null;
  const worker = new Worker(new URL('./pow-worker.ts', import.meta.url), { type: 'module' });
  try {
    const nonce = await new Promise<string>((resolve, reject) => {
      worker.onmessage = (ev: MessageEvent<{ nonce?: string; progress?: number }>) => {
        if (ev.data.nonce !== undefined) resolve(ev.data.nonce);
        else if (ev.data.progress !== undefined) progress(ev.data.progress, c.bits);
      };
      worker.onerror = (e) => reject(new Error(e.message || 'the proof-of-work worker failed'));
      worker.postMessage({ salt: c.salt, bits: c.bits });
    });
    return { challengeId: c.challengeId, nonce };
  } finally {
    worker.terminate();
  }
}
