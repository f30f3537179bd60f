import { CONTINUE_INSTRUCTION, continuationMessages, cutCause, planContinuation } from './continuation';

const a = { provider: 'openai', model: 'a' };
const b = { provider: 'anthropic', model: 'b' };
const c = { provider: 'groq', model: 'c' };

describe('planContinuation (the continuation chooser)', () => {
  it('prefers the targets that take a prefill, in lane order', () => {
    expect(planContinuation([a, b, c], [false, true, true], false)).toEqual({
      mode: 'prefill',
      targets: [b, c],
    });
  });

  it('asks every remaining target by instruction when none takes prefill, or the prefill round failed', () => {
    expect(planContinuation([a, b], [false, false], false)).toEqual({ mode: 'instruction', targets: [a, b] });
    expect(planContinuation([a, b], [true, false], true)).toEqual({ mode: 'instruction', targets: [a, b] });
  });

  it('has nothing to offer when no target is left', () => {
    expect(planContinuation([], [], false)).toBeNull();
    expect(planContinuation([], [], true)).toBeNull();
  });
});

describe('continuationMessages', () => {
  const conversation = [{ role: 'user', content: 'hi' }];
  it('a prefill ends with the answer so far', () => {
    expect(continuationMessages(conversation, 'The quick ', 'prefill')).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'The quick ' },
    ]);
  });
  it('with no text sent yet (reasoning only), the conversation goes as it was', () => {
    expect(continuationMessages(conversation, '', 'prefill')).toEqual(conversation);
    expect(continuationMessages(conversation, '', 'instruction')).toEqual(conversation);
  });
  it('an instruction follows the answer so far with a user message', () => {
    expect(continuationMessages(conversation, 'The quick ', 'instruction')).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'The quick ' },
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
  });
});

describe('cutCause', () => {
  it('names the target whose stream broke, how, and why it was not continued', () => {
    expect(cutCause(a, 'cut', 'no_target')).toBe(
      'the stream from openai/a was cut; no target was left to continue it',
    );
    expect(cutCause(b, 'stall', 'failed', 'upstream_timeout')).toBe(
      'the stream from anthropic/b stalled; its continuation failed (upstream_timeout)',
    );
    expect(cutCause(c, 'garbled', 'tool_calls')).toContain('broke (garbled)');
  });
});
