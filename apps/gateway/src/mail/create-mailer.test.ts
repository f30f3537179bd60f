import { createLogger, createMemoryDestination } from '@platform/logging';
import { createMailer } from './index';

const logger = createLogger({ service: 'test', destination: createMemoryDestination() });

describe('createMailer', () => {
  it('uses SMTP when SMTP_URL is set', async () => {
    const mailer = createMailer(
      { NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'a@b.c' },
      logger,
    );
    expect(mailer.kind).toBe('smtp');
    await mailer.close();
  });

  it('falls back to the log mailer outside production only', () => {
    expect(createMailer({ NODE_ENV: 'development', MAIL_FROM: 'a@b.c' }, logger).kind).toBe('log');
    expect(() => createMailer({ NODE_ENV: 'production', MAIL_FROM: 'a@b.c' }, logger)).toThrow(/SMTP_URL/);
  });
});
