import type { ComponentChildren } from 'preact';

/**
 * Sections of the profile settings contributed by optional features (the avatar upload once
 * the file routes are on the server). Each answers null when it does not apply.
 */
const extras: (() => ComponentChildren | null)[] = [];

export function registerProfileExtra(f: () => ComponentChildren | null): void {
  extras.push(f);
}

export function profileExtras(): ComponentChildren[] {
  return extras.map((f) => f()).filter((x) => x !== null);
}
