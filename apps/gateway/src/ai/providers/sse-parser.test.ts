import { PassThrough } from 'node:stream';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { SseChunkIterator, SseDataLines } from './sse-parser';
import { UpstreamProtocolError } from './upstream-errors';

// The framing of an OpenAI-style event stream, fed piece by piece through a
// plain stream: where the lines split, which lines count, how it ends.

const event = (content: string) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}`;
const finishEvent = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}`;
const contentOf = (chunk: ChatCompletionChunk) => chunk.choices[0]?.delta.content;

async function drain(it: AsyncIterableIterator<ChatCompletionChunk>): Promise<(string | null | undefined)[]> {
  const out: (string | null | undefined)[] = [];
  for await (const chunk of it) out.push(contentOf(chunk));
  return out;
}

/** Writes `text` in pieces of `size` bytes (a multi-byte character may be cut in two), then ends. */
function feed(body: PassThrough, text: string, size: number): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) body.write(bytes.subarray(i, i + size));
  body.end();
}

describe('SSE parser', () => {
  it.each([1, 2, 7, 64, 4096])('reads the same events whatever the piece size (%i bytes)', async (size) => {
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    const text = [
      ': keep-alive comment',
      'event: message',
      event('héllo'),
      '',
      'data:' +
        JSON.stringify({ choices: [{ index: 0, delta: { content: ' wörld' }, finish_reason: null }] }),
      '',
      'id: 3',
      event('!'),
      '',
      'data: [DONE]',
      '',
      event('after done'),
      '',
    ].join('\r\n');
    feed(body, text, size);
    await expect(drain(it)).resolves.toEqual(['héllo', ' wörld', '!']);
  });

  it('accepts bare LF line ends and a finished stream that ends without [DONE]', async () => {
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    feed(body, `${event('a')}\n\n${event('b')}\n\n${finishEvent}\n\n`, 5);
    await expect(drain(it)).resolves.toEqual(['a', 'b', undefined]);
  });

  it('fails a body that ends cleanly with neither [DONE] nor a finish reason: the answer was cut', async () => {
    // What undici hands over when a provider sending `Connection: close` drops the
    // socket mid-stream: the body simply ends.
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    feed(body, `${event('a')}\n\n${event('b')}\n\n`, 5);
    const seen: (string | null | undefined)[] = [];
    const failure = await (async () => {
      for await (const chunk of it) seen.push(contentOf(chunk));
    })().catch((err: unknown) => err);
    expect(seen).toEqual(['a', 'b']);
    expect(failure).toBeInstanceOf(UpstreamProtocolError);
    expect((failure as UpstreamProtocolError).kind).toBe('cut');
  });

  it('holds a line without its end until the end arrives', async () => {
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    body.write(event('whole'));
    const first = it.next();
    let settled = false;
    void first.then(() => {
      settled = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    body.write('\n\n');
    expect(contentOf((await first).value as ChatCompletionChunk)).toBe('whole');
    body.end(`${finishEvent}\n\n`);
    await it.next();
    await expect(it.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it('skips one unreadable event (and says so), then goes on', async () => {
    const body = new PassThrough();
    let garbled = 0;
    const it = new SseChunkIterator(body, () => {
      garbled += 1;
    });
    feed(body, `${event('a')}\n\ndata: {not json\n\n${event('b')}\n\ndata: [DONE]\n\n`, 5);
    expect(await drain(it)).toEqual(['a', 'b']);
    expect(garbled).toBe(1);
  });

  it('delivers what came before two unreadable events in a row, then fails with a protocol error and drops the body', async () => {
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    body.write(`${event('kept')}\n\ndata: {not json\n\ndata: {nor this\n\n`);
    expect(contentOf((await it.next()).value as ChatCompletionChunk)).toBe('kept');
    const err = await it.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamProtocolError);
    expect((err as UpstreamProtocolError).kind).toBe('garbled');
    expect(body.destroyed).toBe(true);
  });

  it('fails on an error event in the middle of the stream', async () => {
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    feed(body, `${event('x')}\n\ndata: {"error":{"message":"overloaded"}}\n\n${event('y')}\n\n`, 3);
    expect(contentOf((await it.next()).value as ChatCompletionChunk)).toBe('x');
    await expect(it.next()).rejects.toThrow('error event in stream');
  });

  it('passes on a broken body before [DONE] as the error', async () => {
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    body.write(`${event('x')}\n\n`);
    expect(contentOf((await it.next()).value as ChatCompletionChunk)).toBe('x');
    body.destroy(new Error('socket hang up'));
    await expect(it.next()).rejects.toThrow('socket hang up');
  });

  it('pauses the body while many events wait unread, and resumes it once they are read', async () => {
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    body.write(Array.from({ length: 100 }, (_, i) => `${event(String(i))}\n\n`).join(''));
    await new Promise((r) => setImmediate(r));
    expect(body.isPaused()).toBe(true);
    const seen: (string | null | undefined)[] = [];
    for (let i = 0; i < 100; i++) seen.push(contentOf((await it.next()).value as ChatCompletionChunk));
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => String(i)));
    expect(body.isPaused()).toBe(false);
    body.end(`${finishEvent}\n\n`);
    await it.next();
    await expect(it.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it('closes the body when the reader stops early', async () => {
    const body = new PassThrough();
    const it = new SseChunkIterator(body);
    body.write(`${event('only')}\n\n`);
    await it.next();
    await it.return();
    expect(body.destroyed).toBe(true);
    await expect(it.next()).resolves.toEqual({ done: true, value: undefined });
  });
});

describe('SSE data lines', () => {
  const all = (lines: SseDataLines): string[] => {
    const out: string[] = [];
    for (let data = lines.next(); data !== null; data = lines.next()) out.push(data);
    return out;
  };

  it('gives the values of whole data lines only, across pieces, LF or CRLF', () => {
    const lines = new SseDataLines();
    lines.push('event: message_start\r\ndata: {"a"');
    expect(all(lines)).toEqual([]);
    lines.push(':1}\r\n\r\n: comment\nid: 2\ndata:bare\ndata: \ndata');
    expect(all(lines)).toEqual(['{"a":1}', 'bare', '']);
    lines.push(':  two spaces\n');
    expect(all(lines)).toEqual([' two spaces']);
  });

  it('holds nothing once cleared', () => {
    const lines = new SseDataLines();
    lines.push('data: x\ndata: y');
    lines.clear();
    lines.push('\n');
    expect(all(lines)).toEqual([]);
  });
});
