import { SseParser } from './sse';

function parseAll(chunks: string[]) {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

describe('SseParser', () => {
  it('dispatches named events at a blank line', () => {
    expect(parseAll(['event: chunk\ndata: {"content":"Hi"}\n\nevent: done\ndata: {}\n\n'])).toEqual([
      { event: 'chunk', data: '{"content":"Hi"}' },
      { event: 'done', data: '{}' },
    ]);
  });

  it('joins an event split across arbitrary chunk boundaries', () => {
    const text = 'event: chunk\r\ndata: {"content":"split"}\r\n\r\n';
    for (let cut = 1; cut < text.length; cut += 1) {
      expect(parseAll([text.slice(0, cut), text.slice(cut)])).toEqual([
        { event: 'chunk', data: '{"content":"split"}' },
      ]);
    }
    expect(parseAll([...text])).toEqual([{ event: 'chunk', data: '{"content":"split"}' }]);
  });

  it('joins multi-line data with LF', () => {
    expect(parseAll(['data: line 1\ndata: line 2\ndata:\n\n'])).toEqual([
      { event: 'message', data: 'line 1\nline 2\n' },
    ]);
  });

  it('skips comments and keep-alives, and events without data', () => {
    expect(parseAll([': keep-alive\n\n', ':\n', 'event: ping\n\n', 'event: chunk\ndata: x\n\n'])).toEqual([
      { event: 'chunk', data: 'x' },
    ]);
  });

  it('accepts CR-only line ends, including a CR at the end of a chunk', () => {
    expect(parseAll(['event: a\rdata: 1\r', '\rdata: 2\r\r'])).toEqual([
      { event: 'a', data: '1' },
      { event: 'message', data: '2' },
    ]);
  });

  it('keeps one space after the colon only, and records the last id', () => {
    expect(parseAll(['id: 7\ndata:  two spaces\n\n'])).toEqual([
      { event: 'message', data: ' two spaces', id: '7' },
    ]);
  });

  it('drops an event cut off by the end of the body', () => {
    expect(parseAll(['event: chunk\ndata: {"content":"lost"}\n'])).toEqual([]);
  });
});
