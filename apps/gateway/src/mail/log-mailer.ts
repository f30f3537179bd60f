import type { Mailer } from './mailer';

export type LogMailerOptions = {
  /** Where the mail goes; stderr by default. */
  write?: (text: string) => void;
};

export const LOG_MAILER_BANNER = 'DEVELOPMENT ONLY - log mailer (SMTP_URL unset): this mail was NOT sent';

/**
 * Development stand-in for SMTP: prints the whole mail, sign-in link included,
 * so a local user can still sign in. It writes past the structured logger on
 * purpose, because the logger masks `code=` in every line; this is the one
 * place a link is ever printed, and createMailer never picks it in production.
 */
export function createLogMailer(opts: LogMailerOptions = {}): Mailer {
  const write = opts.write ?? ((text: string) => process.stderr.write(text));
  return {
    kind: 'log',
    async send(message) {
      write(
        [
          `===== ${LOG_MAILER_BANNER} =====`,
          `To: ${message.to}`,
          `Subject: ${message.subject}`,
          '',
          message.text,
          `===== end of mail =====`,
          '',
        ].join('\n'),
      );
    },
    async close() {},
  };
}
