import type { Transporter } from 'nodemailer';
import type { Mailer } from './mailer';
import { smtpGreets } from './smtp-greeting';

export type SmtpMailerOptions = {
  /** smtp(s)://user:pass@host:port, with nodemailer options as query (e.g. `?ignoreTLS=true`). */
  url: string;
  from: string;
};

/**
 * Sends through nodemailer over SMTP; one pooled transport per process, made
 * (and nodemailer loaded) at the first send: most workers never send a mail,
 * and readiness only asks whether the server greets (smtpGreets).
 */
export function createSmtpMailer(opts: SmtpMailerOptions): Mailer {
  let transport: Transporter | undefined;
  const transportNow = (): Transporter => {
    if (transport === undefined) {
      const nodemailer = require('nodemailer') as typeof import('nodemailer');
      transport = nodemailer.createTransport(opts.url);
    }
    return transport;
  };
  return {
    kind: 'smtp',
    async send(message) {
      await transportNow().sendMail({ from: opts.from, ...message });
    },
    verify: () => smtpGreets(opts.url),
    async close() {
      transport?.close();
    },
  };
}
