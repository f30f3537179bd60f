import { createTransport } from 'nodemailer';
import { listenLoopback } from '../src/http-server';
import { type SmtpCapture, startSmtpCapture } from '../src/smtp-capture';

let smtp: SmtpCapture;

beforeEach(async () => {
  smtp = await startSmtpCapture();
});
afterEach(() => smtp.close());

test('a nodemailer message is captured and its link can be followed', async () => {
  const codes: string[] = [];
  const app = await listenLoopback((req, res) => {
    codes.push(new URL(req.url ?? '/', 'http://x').searchParams.get('code') ?? '');
    res.end('signed in');
  });
  try {
    // A long link forces quoted-printable soft line breaks, the case that breaks naive parsing.
    const link = `${app.url}/api/v1/auth/verify?code=${'c0de'.repeat(30)}&redirect=%2Fdashboard`;
    const transport = createTransport(smtp.url);
    const info = await transport.sendMail({
      from: 'Platform <no-reply@platform.test>',
      to: 'user@example.com',
      subject: 'Dein Anmeldelink – gültig für 15 Minuten ✓',
      text: `Hallo! Öffne diesen Link zum Anmelden:\n${link}\n`,
      html: `<p>Hallo! <a href="${link}">Anmelden</a></p>`,
    });
    expect(info.accepted).toEqual(['user@example.com']);

    const message = await smtp.waitForMessage((m) => m.to.includes('user@example.com'));
    expect(message.raw).toMatch(/Content-Transfer-Encoding: quoted-printable/i);
    expect(message.raw).toMatch(/=\r\n/);
    expect(message.from).toBe('no-reply@platform.test');
    expect(message.subject).toBe('Dein Anmeldelink – gültig für 15 Minuten ✓');
    expect(message.text).toContain('Öffne diesen Link');
    expect(message.html).toContain(`href="${link}"`);
    const found = /https?:\/\/\S+/.exec(message.text)?.[0];
    expect(found).toBe(link);

    const response = await fetch(found as string);
    expect(await response.text()).toBe('signed in');
    expect(codes).toEqual(['c0de'.repeat(30)]);
  } finally {
    await app.close();
  }
});

test('base64 text parts are decoded', async () => {
  const transport = createTransport(smtp.url);
  await transport.sendMail({
    from: 'a@platform.test',
    to: ['b@example.com', 'c@example.com'],
    subject: 'plain',
    text: 'Grüße aus dem Test',
    textEncoding: 'base64',
  });
  const [message] = smtp.messages;
  expect(message?.raw).toMatch(/Content-Transfer-Encoding: base64/i);
  expect(message?.text).toBe('Grüße aus dem Test');
  expect(message?.html).toBe('');
  expect(message?.to).toEqual(['b@example.com', 'c@example.com']);
});

test('waitForMessage waits for a message that arrives later', async () => {
  const waiting = smtp.waitForMessage((m) => m.subject === 'later');
  const transport = createTransport(smtp.url);
  await transport.sendMail({ from: 'a@platform.test', to: 'd@example.com', subject: 'earlier', text: 'x' });
  await transport.sendMail({ from: 'a@platform.test', to: 'd@example.com', subject: 'later', text: 'y' });
  await expect(waiting).resolves.toMatchObject({ subject: 'later', text: 'y' });
  await expect(smtp.waitForMessage((m) => m.subject === 'never', 50)).rejects.toThrow(/no matching e-mail/);
});

test('failNext makes the next delivery fail with the given SMTP code', async () => {
  smtp.failNext({ responseCode: 451, message: 'try later' });
  const transport = createTransport(smtp.url);
  const send = () =>
    transport.sendMail({ from: 'a@platform.test', to: 'e@example.com', subject: 's', text: 't' });
  await expect(send()).rejects.toMatchObject({ responseCode: 451 });
  await expect(send()).resolves.toMatchObject({ accepted: ['e@example.com'] });
  expect(smtp.messages).toHaveLength(1);
});
