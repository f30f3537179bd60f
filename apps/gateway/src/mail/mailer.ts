/** One outgoing e-mail. */
export type MailMessage = { to: string; subject: string; text: string; html?: string };

/**
 * Port for sending mail. Two adapters: SMTP (nodemailer; production and tests
 * against an in-process SMTP server) and the log mailer (local development
 * without SMTP_URL).
 */
export type Mailer = {
  readonly kind: 'smtp' | 'log';
  send(message: MailMessage): Promise<void>;
  /** Readiness: true when the mail server accepts a connection (SMTP only). */
  verify?(): Promise<boolean>;
  close(): Promise<void>;
};
