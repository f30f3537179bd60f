import nodemailer from 'nodemailer';
import type { Mailer } from './mailer';

export type SmtpMailerOptions = {
  /** smtp(s)://user:pass@host:port, with nodemailer options as query (e.g. `?ignoreTLS=true`). */
  url: string;
  from: string;
};

/** Sends through nodemailer over SMTP; one pooled transport per process. */
export function createSmtpMailer(opts: SmtpMailerOptions): Mailer {
  const transport = nodemailer.createTransport(opts.url);
  return {
    kind: 'smtp',
    async send(message) {
      await transport.sendMail({ from: opts.from, ...message });
    },
    verify: () => transport.verify(),
    async close() {
      transport.close();
    },
  };
}
