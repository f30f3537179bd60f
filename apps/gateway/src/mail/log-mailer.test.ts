import { createLogMailer, LOG_MAILER_BANNER } from './log-mailer';

describe('log mailer', () => {
  it('prints the whole mail, link included, inside clearly marked development-only lines', async () => {
    const out: string[] = [];
    const mailer = createLogMailer({ write: (text) => out.push(text) });
    await mailer.send({
      to: 'ada@example.com',
      subject: 'Your sign-in link',
      text: 'http://x.test/?code=abc123',
    });
    const printed = out.join('');
    expect(printed).toContain(LOG_MAILER_BANNER);
    expect(printed).toContain('DEVELOPMENT ONLY');
    expect(printed).toContain('To: ada@example.com');
    expect(printed).toContain('http://x.test/?code=abc123');
    expect(mailer.kind).toBe('log');
  });
});
