import type { Logger } from '@platform/logging';
import type { GatewayEnv } from '../env';
import { createLogMailer } from './log-mailer';
import type { Mailer } from './mailer';
import { createSmtpMailer } from './smtp-mailer';

export { createLogMailer, LOG_MAILER_BANNER } from './log-mailer';
export type { Mailer, MailMessage } from './mailer';
export { createSmtpMailer } from './smtp-mailer';

/** SMTP when SMTP_URL is set; otherwise the log mailer, which production refuses. */
export function createMailer(
  env: Pick<GatewayEnv, 'NODE_ENV' | 'SMTP_URL' | 'MAIL_FROM'>,
  logger: Logger,
): Mailer {
  if (env.SMTP_URL) return createSmtpMailer({ url: env.SMTP_URL, from: env.MAIL_FROM });
  if (env.NODE_ENV === 'production') throw new Error('SMTP_URL is required in production');
  logger.warn('SMTP_URL unset: sign-in links are printed to stderr by the log mailer (development only)');
  return createLogMailer();
}
