import { startSmtpCapture } from '@platform/testing';

// Issue 46: nodemailer (~3 MB of heap with its modules) loads at a worker's
// first mail, not at start nor for readiness.
describe('createSmtpMailer', () => {
  it('loads nodemailer only at the first send; verify() answers without it', async () => {
    const smtp = await startSmtpCapture();
    let loads = 0;
    try {
      await jest.isolateModulesAsync(async () => {
        const real = jest.requireActual<typeof import('nodemailer')>('nodemailer');
        jest.doMock('nodemailer', () => {
          loads += 1;
          return real;
        });
        const { createSmtpMailer } = require('./smtp-mailer') as typeof import('./smtp-mailer');
        const mailer = createSmtpMailer({ url: smtp.url, from: 'gateway@example.com' });
        expect(await mailer.verify?.()).toBe(true);
        expect(loads).toBe(0);
        await mailer.send({ to: 'a@example.com', subject: 'one', text: 'first' });
        await mailer.send({ to: 'b@example.com', subject: 'two', text: 'second' });
        expect(loads).toBe(1);
        await mailer.close();
      });
      expect(smtp.messages.map((m) => [m.to, m.subject, m.text.trim()])).toEqual([
        [['a@example.com'], 'one', 'first'],
        [['b@example.com'], 'two', 'second'],
      ]);
    } finally {
      await smtp.close();
    }
  });

  it('closes without ever loading nodemailer when it sent nothing', async () => {
    let loads = 0;
    await jest.isolateModulesAsync(async () => {
      jest.doMock('nodemailer', () => {
        loads += 1;
        return {};
      });
      const { createSmtpMailer } = require('./smtp-mailer') as typeof import('./smtp-mailer');
      await createSmtpMailer({ url: 'smtp://127.0.0.1:9', from: 'gateway@example.com' }).close();
    });
    expect(loads).toBe(0);
  });
});
