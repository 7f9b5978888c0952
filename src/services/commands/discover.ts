import type { CommandDef } from './types.js';

// commandDiscover's ranking: word overlap between the request and what a command says of itself
// (name, description, nlDescription, intent samples), weighted by where the word appears. Small
// and predictable; an operator who wants embeddings can put an agent in front of `svc mcp`.

const STOP = new Set(
  'a an the to of in on for and or me my i we us our this that it is be please can you some set'.split(
    ' ',
  ),
);

/** Lower-case words with a light stemming (plural s, -ing, -ed). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((w) => !STOP.has(w))
    .map((w) =>
      w.length > 5 && w.endsWith('ing')
        ? w.slice(0, -3)
        : w.length > 4 && w.endsWith('ed')
          ? w.slice(0, -2)
          : w.length > 3 && w.endsWith('s')
            ? w.slice(0, -1)
            : w,
    );
}

/** The score of a command for a request; 0 when nothing matches. */
export function score(query: string, cmd: CommandDef): number {
  const q = new Set(words(query));
  if (q.size === 0) return 0;
  const fields: Array<[string, number]> = [
    [cmd.name, 4],
    [cmd.nlDescription ?? '', 2],
    [cmd.description, 1],
    ...cmd.intentSamples.map((s): [string, number] => [s, 3]),
  ];
  let total = 0;
  for (const [text, weight] of fields) {
    const ws = new Set(words(text));
    let hits = 0;
    for (const w of q) if (ws.has(w)) hits++;
    total += weight * hits;
  }
  return total / q.size;
}

/** Commands ranked for a request, best first; those that match nothing are left out. */
export function rank(query: string, cmds: readonly CommandDef[], limit: number) {
  return cmds
    .map((c) => ({ command: c, score: score(query, c) }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || a.command.name.localeCompare(b.command.name))
    .slice(0, limit);
}
