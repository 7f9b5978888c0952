import fs from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { conflictWords, suggestUsernames, validationWords } from '../../web/src/api/error-words.js';

const FALLBACK = /reload to see it as it is now/i;

/** Every `conflict(...)` message written in the server's sources, its `${…}` filled in. */
function serverConflictMessages(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) {
        const text = fs.readFileSync(p, 'utf8');
        for (const m of text.matchAll(/\bconflict\(\s*(['`])((?:(?!\1).)*)\1/gs)) {
          out.push(
            m[2]!.replace(/\$\{[^}]*\}[^`]*?\}|\$\{[^}]*\}/g, (x) =>
              x.includes('name') ? 'general' : 'x',
            ),
          );
        }
      }
    }
  };
  walk(path.resolve(import.meta.dirname, '../../src'));
  return out;
}

// The web app's words for CONFLICT and VALIDATION: each says what happened and what to do
// (issue: a taken username once said "Reload to see the current state, then retry").
describe('error words', () => {
  it('says a username is taken and suggests others that keep the username rules', () => {
    const x = conflictWords('the username "alice" is taken');
    expect(x.what).toBe('The username "alice" is taken.');
    expect(x.todo).toMatch(/^Choose another username, such as alice\d+ or alice_\d+\.$/);
    for (const name of ['alice', 'a.b-', 'x__', 'Ωmega', 'a'.repeat(40)]) {
      for (const s of suggestUsernames(name)) {
        expect(s).toMatch(/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/);
        expect(s).not.toMatch(/[._-]{2}/);
        expect(s.length).toBeLessThanOrEqual(32);
      }
    }
  });

  it('gives every CONFLICT the server can answer a next step of its own', () => {
    const messages = serverConflictMessages();
    expect(messages.length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const m of messages) {
      const x = conflictWords(m);
      if (FALLBACK.test(x.todo)) missing.push(m);
      expect(x.what.length, m).toBeGreaterThan(3);
      expect(x.todo, m).not.toMatch(/updateWorkspacePlugin/);
    }
    expect(missing).toEqual([]);
  });

  it('keeps the advice a VALIDATION message carries after a semicolon', () => {
    const x = validationWords('a blocked account cannot be made an operator; unblock it first');
    expect(x).toEqual({
      what: 'A blocked account cannot be made an operator.',
      todo: 'Unblock it first.',
    });
    expect(validationWords('name must be 1 to 80 characters').todo).toBe(
      'Change what you entered and try again.',
    );
  });
});
