/**
 * Thrown when the environment does not make a valid configuration; lists every problem. In a
 * module of its own so the CLI can recognise it without loading the configuration's schema.
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}
