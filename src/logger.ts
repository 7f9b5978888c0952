import pino, { type Logger } from 'pino';

/**
 * The root logger: one JSON object per line on stdout. Cookies, CSRF tokens, passwords and
 * signatures never reach the log.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'svc' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'req.headers.cookie',
          'req.headers["x-csrf-token"]',
          'req.headers.authorization',
          'req.headers["svc-device-signature"]',
          'res.headers["set-cookie"]',
          '*.password',
          '*.token',
          '*.csrfToken',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}

export type { Logger };
