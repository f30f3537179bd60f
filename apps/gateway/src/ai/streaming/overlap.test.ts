import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { contentOf, createOverlapGate, MIN_OVERLAP, OVERLAP_WINDOW, overlapLength } from './overlap';

const chunk = (content: string, finish: string | null = null): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta: { content }, finish_reason: finish as never, logprobs: null }],
});
const text = (chunks: ChatCompletionChunk[]) => chunks.map(contentOf).join('');

describe('overlapLength', () => {
  it('finds the longest suffix of the sent text that starts the new one', () => {
    expect(overlapLength('The quick ', 'quick brown fox')).toBe(6);
    expect(overlapLength('abcabcab', 'abcabd')).toBe(5);
    // Nothing shared: the new text goes out whole.
    expect(overlapLength('The quick ', 'brown fox')).toBe(0);
  });

  it('keeps a short chance match, but not an answer started over', () => {
    expect(overlapLength('I see the', 'the end')).toBe(0);
    expect(MIN_OVERLAP).toBeGreaterThan(3);
    expect(overlapLength('ab', 'abc')).toBe(2);
  });

  it('looks at no more than the window on either side', () => {
    const sent = `${'x'.repeat(OVERLAP_WINDOW)}tail!`;
    expect(overlapLength(sent, 'tail! and more')).toBe(5);
    // A restatement longer than the window is removed only up to the window (documented limit).
    const long = 'y'.repeat(OVERLAP_WINDOW + 10);
    expect(overlapLength(`a${long}`, `${long}b`)).toBe(OVERLAP_WINDOW);
  });

  it('stays linear on text built to make a naive search backtrack', () => {
    const sent = 'a'.repeat(OVERLAP_WINDOW);
    const next = `${'a'.repeat(OVERLAP_WINDOW - 1)}b`;
    expect(overlapLength(sent, next)).toBe(OVERLAP_WINDOW - 1);
  });
});

describe('createOverlapGate', () => {
  it('holds the first chunks until it can tell the overlap, then trims it across chunks', () => {
    const gate = createOverlapGate('The quick ');
    expect(gate.push(chunk('qui'))).toEqual([]);
    expect(gate.push(chunk('ck '))).toEqual([]);
    const out = gate.push(chunk('brown fox'));
    expect(text(out)).toBe('brown fox');
    // Chunks left empty by the trim are dropped; later ones pass untouched.
    expect(out).toHaveLength(1);
    expect(gate.removed).toBe(6);
    expect(text(gate.push(chunk(' jumps')))).toBe(' jumps');
  });

  it('opens at the finish reason, and at the end of a segment that never filled it', () => {
    const finished = createOverlapGate('a long answer so far');
    const out = finished.push(chunk('so far, done', 'stop'));
    expect(text(out)).toBe(', done');
    expect(out[0]?.choices[0]?.finish_reason).toBe('stop');
    const cut = createOverlapGate('a long answer so far');
    expect(cut.push(chunk('so far'))).toEqual([]);
    expect(text(cut.end())).toBe('');
    expect(cut.end()).toEqual([]);
  });

  it('lets everything through when nothing was restated', () => {
    const gate = createOverlapGate('Hello');
    expect(text(gate.push(chunk(' world')))).toBe(' world');
    expect(gate.removed).toBe(0);
  });
});
