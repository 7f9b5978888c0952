import { inspect } from 'node:util';

import { ConfigError } from './config-error.js';
import { envSchema } from './variables.js';

const secretVariables = envSchema.pick({
  SVC_DATABASE_URL: true,
  SVC_REDIS_URL: true,
  SVC_SMTP_PASSWORD: true,
});

const REDACTED = '[redacted]';

/**
 * The values from the environment that grant access: connection URLs (they may carry a
 * password) and the SMTP password. Kept apart from Config, which every service reads and which
 * may be logged: the root hands each one to the single object that needs it. Printing or
 * logging a Secrets shows only which ones are set. The server keys (signing, franking, cookie)
 * are secrets too; they live in the database and are loaded by services/instance/server-keys.ts.
 */
export class Secrets {
  constructor(
    /** SVC_DATABASE_URL: PostgreSQL when set, else SQLite under SVC_DATA_DIR. */
    readonly databaseUrl: string | null,
    /** SVC_REDIS_URL: the event bus and presence across processes when set. */
    readonly redisUrl: string | null,
    /** SVC_SMTP_PASSWORD. */
    readonly smtpPassword: string | null,
  ) {
    Object.freeze(this);
  }

  toJSON(): Record<string, string | null> {
    return {
      databaseUrl: this.databaseUrl === null ? null : REDACTED,
      redisUrl: this.redisUrl === null ? null : REDACTED,
      smtpPassword: this.smtpPassword === null ? null : REDACTED,
    };
  }

  [inspect.custom](): string {
    return `Secrets ${JSON.stringify(this.toJSON())}`;
  }

  toString(): string {
    return this[inspect.custom]();
  }
}

/**
 * Reads the secret SVC_* variables. loadConfig validates them with the rest (every problem at
 * once); this throws the same ConfigError when called alone on a bad value.
 */
export function loadSecrets(env: NodeJS.ProcessEnv = process.env): Secrets {
  const parsed = secretVariables.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  return new Secrets(e.SVC_DATABASE_URL, e.SVC_REDIS_URL, e.SVC_SMTP_PASSWORD);
}
