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

/**
 * At start: says on the first screen when the SMTP server does not answer, so a
 * sign-in that answers 202 while its mail cannot leave is not a silent failure.
 * Names host and port only (the URL may hold a password). Never throws.
 */
export async function warnIfMailerUnreachable(
  mailer: Mailer,
  smtpUrl: string | undefined,
  logger: Pick<Logger, 'warn'>,
  timeoutMs = 5_000,
): Promise<boolean> {
  if (!mailer.verify || !smtpUrl) return true;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    timer.unref();
  });
  let reason: string | undefined;
  try {
    const answer = await Promise.race([mailer.verify(), timedOut]);
    if (answer === 'timeout') reason = `no answer within ${timeoutMs} ms`;
    else if (!answer) reason = 'the server refused';
  } catch (err) {
    reason = (err as { code?: string }).code ?? (err as Error).message;
  } finally {
    clearTimeout(timer);
  }
  if (reason === undefined) return true;
  const { hostname, port, protocol } = new URL(smtpUrl);
  logger.warn(
    { smtp_host: `${hostname}:${port || (protocol === 'smtps:' ? 465 : 587)}`, reason },
    'SMTP_URL: the mail server does not answer, so sign-in e-mails will not arrive until it does (sign-in still answers 202)',
  );
  return false;
}
