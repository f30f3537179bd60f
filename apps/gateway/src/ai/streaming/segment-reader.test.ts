import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { UpstreamProtocolError } from '../providers/upstream-errors';
import { readSegment, readToFirstOutput } from './segment-reader';
import type { StreamWatch } from './stream-watch';

type Piece = { content?: string; role?: 'assistant'; finish?: string; usage?: boolean } | Error;

/** A fake upstream: the chunks of a scripted stream, or an error where the script says. */
async function* upstream(pieces: Piece[]): AsyncGenerator<ChatCompletionChunk> {
  for (const p of pieces) {
    if (p instanceof Error) throw p;
    yield {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [
        {
          index: 0,
          delta: { ...(p.role ? { role: p.role } : {}), ...(p.content ? { content: p.content } : {}) },
          finish_reason: (p.finish ?? null) as never,
          logprobs: null,
        },
      ],
      ...(p.usage ? { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } } : {}),
    };
  }
}

function fakeWatch(stalled = false): StreamWatch & { waits: boolean[] } {
  const waits: boolean[] = [];
  return {
    waits,
    follow() {},
    waiting: (on) => void waits.push(on),
    stalled,
    shuttingDown: false,
    close() {},
  };
}

const signal = new AbortController().signal;

describe('readToFirstOutput', () => {
  it('keeps the chunks before the first output pending, and drops the role of a continuation', async () => {
    const started = await readToFirstOutput(
      upstream([{ role: 'assistant' }, { content: 'Hi' }]),
      signal,
      true,
    );
    expect(started.state.started).toBe(true);
    expect(started.state.pending).toHaveLength(2);
    expect(started.state.pending[0]?.choices[0]?.delta.role).toBeUndefined();
  });
});

describe('readSegment (the segment reader) against a fake upstream', () => {
  it('relays every chunk in order and finishes on the finish reason, with its usage', async () => {
    const stream = upstream([
      { role: 'assistant' },
      { content: 'a' },
      { content: 'b' },
      { finish: 'stop' },
      { usage: true },
    ]);
    const started = await readToFirstOutput(stream, signal, false);
    const relayed: string[] = [];
    const watch = fakeWatch();
    const end = await readSegment(started, {
      watch,
      continued: false,
      relay: (c) => void relayed.push(c.choices[0]?.delta.content ?? ''),
    });
    expect(end).toEqual({ cut: null, error: null });
    expect(relayed.join('')).toBe('ab');
    expect(started.state.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect(watch.waits.slice(0, 2)).toEqual([true, false]);
  });

  it('a stream that ends without a finish reason was cut', async () => {
    const started = await readToFirstOutput(upstream([{ content: 'a' }, { content: 'b' }]), signal, false);
    const end = await readSegment(started, { watch: fakeWatch(), continued: false, relay: () => undefined });
    expect(end).toEqual({ cut: 'cut', error: null });
  });

  it('names a failure: stall when the watch fired, garbled or error events, else cut', async () => {
    const read = async (err: Error, stalled = false) =>
      readSegment(await readToFirstOutput(upstream([{ content: 'a' }, err]), signal, false), {
        watch: fakeWatch(stalled),
        continued: false,
        relay: () => undefined,
      });
    expect(await read(new Error('aborted'), true)).toEqual({ cut: 'stall', error: 'Error' });
    expect((await read(new UpstreamProtocolError('x', 'garbled'))).cut).toBe('garbled');
    expect((await read(new UpstreamProtocolError('x', 'error_event'))).cut).toBe('error_event');
    expect((await read(new TypeError('terminated'))).cut).toBe('cut');
  });

  it('waits for the client only when the relay says its socket pushed back', async () => {
    const started = await readToFirstOutput(
      upstream([{ content: 'a' }, { content: 'b' }, { finish: 'stop' }]),
      signal,
      false,
    );
    let drained = 0;
    const end = await readSegment(started, {
      watch: fakeWatch(),
      continued: false,
      relay: () => Promise.resolve().then(() => void drained++),
    });
    expect(end.cut).toBeNull();
    expect(drained).toBe(3);
  });
});
