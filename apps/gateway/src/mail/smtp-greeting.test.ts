import net from 'node:net';
import { freePort, startSmtpCapture } from '@platform/testing';
import { smtpGreets } from './smtp-greeting';

/** A TCP server on loopback that answers each connection with `reply` (or nothing) and records what it got. */
async function rawServer(
  reply: string | null,
): Promise<{ url: string; got: string[]; close(): Promise<void> }> {
  const got: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('close', () => {
      got.push(text);
      sockets.delete(socket);
    });
    socket.on('error', () => undefined);
    if (reply !== null) socket.write(reply);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `smtp://user:secret@127.0.0.1:${address.port}`,
    got,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('smtpGreets (readiness and the start-up check of SMTP_URL)', () => {
  it('is true for a real SMTP server, and says QUIT', async () => {
    const smtp = await startSmtpCapture();
    try {
      expect(await smtpGreets(smtp.url)).toBe(true);
    } finally {
      await smtp.close();
    }
  });

  it('reads a multi-line 220 greeting to its last line, then says QUIT', async () => {
    const server = await rawServer('220-mail.example ESMTP\r\n220-more text\r\n220 ready\r\n');
    try {
      expect(await smtpGreets(server.url)).toBe(true);
      for (let i = 0; i < 50 && server.got.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
      expect(server.got).toEqual(['QUIT\r\n']);
    } finally {
      await server.close();
    }
  });

  it('is false for a server that refuses the session (554)', async () => {
    const server = await rawServer('554 no service\r\n');
    try {
      const started = Date.now();
      expect(await smtpGreets(server.url, 5_000)).toBe(false);
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      await server.close();
    }
  });

  it('rejects with the code when nothing listens, and for a bad URL', async () => {
    const port = await freePort();
    await expect(smtpGreets(`smtp://127.0.0.1:${port}`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(smtpGreets('not a url')).rejects.toThrow();
  });

  it('is false when the server never greets, or closes before it greets', async () => {
    const silent = await rawServer(null);
    try {
      const started = Date.now();
      expect(await smtpGreets(silent.url, 300)).toBe(false);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    } finally {
      await silent.close();
    }
    const closing = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = closing.address() as net.AddressInfo;
      expect(await smtpGreets(`smtp://127.0.0.1:${port}`)).toBe(false);
    } finally {
      await new Promise((resolve) => closing.close(resolve));
    }
  });

  it('gives up on a server that sends more than any greeting without ending a reply', async () => {
    const server = await rawServer(`220-${'x'.repeat(9_000)}`);
    try {
      expect(await smtpGreets(server.url, 2_000)).toBe(false);
    } finally {
      await server.close();
    }
  });
});
