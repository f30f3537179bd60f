import { freePort, startSmtpCapture } from '@platform/testing';
import { createSmtpMailer, warnIfMailerUnreachable } from '.';

function capturingLogger() {
  const warnings: Array<{ fields: Record<string, unknown>; msg: string }> = [];
  return {
    warnings,
    warn: (fields: Record<string, unknown>, msg: string) => warnings.push({ fields, msg }),
  };
}

describe('warnIfMailerUnreachable (gateway start)', () => {
  it('warns, naming host and port but not the password, when nothing listens on the SMTP port', async () => {
    const port = await freePort();
    const url = `smtp://user:hunter2-secret@127.0.0.1:${port}`;
    const mailer = createSmtpMailer({ url, from: 'x@localhost' });
    const logger = capturingLogger();
    try {
      expect(await warnIfMailerUnreachable(mailer, url, logger as never, 3_000)).toBe(false);
    } finally {
      await mailer.close();
    }
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]?.msg).toMatch(/^SMTP_URL: the mail server does not answer/);
    expect(logger.warnings[0]?.fields.smtp_host).toBe(`127.0.0.1:${port}`);
    expect(JSON.stringify(logger.warnings)).not.toContain('hunter2-secret');
  });

  it('stays quiet when the SMTP server answers', async () => {
    const smtp = await startSmtpCapture();
    const mailer = createSmtpMailer({ url: smtp.url, from: 'x@localhost' });
    const logger = capturingLogger();
    try {
      expect(await warnIfMailerUnreachable(mailer, smtp.url, logger as never)).toBe(true);
    } finally {
      await mailer.close();
      await smtp.close();
    }
    expect(logger.warnings).toEqual([]);
  });
});
