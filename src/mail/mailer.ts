import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

import type { Config } from '../config/index.js';

/** One plain-text message. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** Extra headers (`List-Unsubscribe` of notification digests). */
  headers?: Record<string, string>;
  /**
   * What the log may show of this mail while SMTP is not configured, besides recipient and
   * subject: a password reset's token (the contract wants it readable there), nothing else.
   */
  logFields?: Record<string, string>;
}

/**
 * Sends mail. `send` resolves once the message is handed to the SMTP server (or logged); it
 * rejects when the server refuses it, and callers decide whether that matters.
 */
export interface Mailer {
  /** `smtp` when mail leaves the server, `log` when it is only written to the log. */
  readonly kind: 'smtp' | 'log';
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}

/**
 * Writes mail to the log instead of sending it: used while the `email` feature is unavailable
 * (SVC_SMTP_HOST or SVC_SMTP_FROM unset). The contract asks for recipient and subject; a mail's
 * `logFields` are added (a password reset's token, so a development setup can reset a password).
 * Never the text: a digest carries message excerpts and an unsubscribe token, an invite its
 * invite token. `SVC_MAIL_LOG_BODIES=true` (development only) logs the text and headers too.
 */
export class LogMailer implements Mailer {
  readonly kind = 'log' as const;
  constructor(
    private readonly log: Logger,
    private readonly bodies = false,
  ) {}

  async send(message: MailMessage): Promise<void> {
    const mail: Record<string, unknown> = {
      to: message.to,
      subject: message.subject,
      ...message.logFields,
    };
    if (this.bodies) {
      mail.text = message.text;
      if (message.headers) mail.headers = message.headers;
    }
    this.log.info({ mail }, 'mail not sent (SMTP is not configured); logged instead');
  }

  async close(): Promise<void> {}
}

/** Sends mail through the SMTP server of SVC_SMTP_*. */
export class SmtpMailer implements Mailer {
  readonly kind = 'smtp' as const;
  private readonly transport: nodemailer.Transporter;

  constructor(
    private readonly smtp: Config['smtp'] & { host: string; from: string },
    password: string | null,
    private readonly log: Logger,
  ) {
    this.transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      ...(smtp.user ? { auth: { user: smtp.user, pass: password ?? '' } } : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
    // A send's failure reaches its caller; this covers anything the transport emits besides,
    // which would otherwise end the process.
    this.transport.on('error', (err: Error) =>
      this.log.warn({ err: err.message }, 'smtp transport error'),
    );
  }

  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({
      from: this.smtp.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.headers ? { headers: message.headers } : {}),
    });
    this.log.info({ to: message.to, subject: message.subject }, 'mail sent');
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/** The mailer the configuration asks for: SMTP when host and sender are set, else the log. */
export function createMailer(config: Config, smtpPassword: string | null, log: Logger): Mailer {
  const { host, from } = config.smtp;
  if (host && from) return new SmtpMailer({ ...config.smtp, host, from }, smtpPassword, log);
  return new LogMailer(log, config.mailLogBodies);
}
