import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import bpe from 'gpt-tokenizer/bpeRanks/o200k_base';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { bpeRanksFileOf } from '../../scripts/write-bpe-ranks';
import { BPE_RANKS_FILE, countO200kTokens, O200K_SPLIT, o200kAsciiPieces } from './bpe-count';
import { estimatePromptTokens } from './estimate';

const ROOT = path.join(__dirname, '..', '..', '..', '..');

/** A fixed pseudo-random sequence, so a failure names a text that comes back. */
function randomTexts(count: number): string[] {
  let seed = 46;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  // Letters of several scripts, combining marks, emoji (surrogate pairs), lone surrogates,
  // digits, punctuation runs, contractions, and every kind of whitespace the split regex treats apart.
  const alphabet = [
    'a',
    'Z',
    's',
    't',
    "'",
    'é',
    'ß',
    '東',
    'タ',
    '🙂',
    '👨‍👩‍👧',
    '\u0301',
    'ع',
    'ж',
    'क',
    '\uD800',
    '\uDC00',
    '1',
    '42',
    '.',
    '=',
    '-',
    '/',
    '{"',
    ' ',
    '  ',
    '\n',
    '\r\n',
    '\t',
    '\u00a0',
  ];
  const texts: string[] = [];
  for (let i = 0; i < count; i += 1) {
    let text = '';
    const length = Math.floor(next() * 80);
    for (let j = 0; j < length; j += 1) text += alphabet[Math.floor(next() * alphabet.length)];
    texts.push(text);
  }
  return texts;
}

describe('o200k_base counts from the ranks file (bpe-count.ts)', () => {
  it('the ranks file is gpt-tokenizer’s o200k_base ranks, byte for byte', () => {
    expect(readFileSync(BPE_RANKS_FILE).equals(bpeRanksFileOf(bpe))).toBe(true);
  });

  it('counts what gpt-tokenizer counts: documents of this repository and 3,000 mixed-script texts', () => {
    const documents = [
      'README.md',
      'docs/performance.md',
      'docs/gateway-ai.md',
      'apps/gateway/src/app.ts',
    ].map((file) => readFileSync(path.join(ROOT, file), 'utf8'));
    const texts = [
      '',
      'Say hello to the benchmark.',
      "I'm sure they'll say we've DONE it, he'd've",
      'Grüße aus Köln — 東京タワー 🙂 مرحبا بالعالم Привет мир नमस्ते',
      '==================== ----------\n\n\n    \t\t x',
      '3.14159265358979 1234567 ٣٤٥',
      ...documents,
      ...randomTexts(3000),
    ];
    const differing = texts.filter((text) => countO200kTokens(text) !== countTokens(text));
    expect(differing).toEqual([]);
    // The documents are long enough to exercise the merges, not only whole-piece hits.
    expect(countO200kTokens(documents[1] as string)).toBeGreaterThan(5000);
  });

  it('counts special tokens in a prompt as their text, where gpt-tokenizer throws', () => {
    const text = 'ignore this <|endoftext|> and <|im_start|>system';
    expect(() => countTokens(text)).toThrow(/special token/);
    expect(countO200kTokens(text)).toBe(countTokens(text, { disallowedSpecial: new Set() }));
    expect(estimatePromptTokens([{ content: text }])).toBeGreaterThan(7);
  });

  describe('ASCII text, split without the regex', () => {
    const regexPieces = (text: string) => Array.from(text.matchAll(O200K_SPLIT), (m) => m[0]);
    // Fragments where the regex's alternatives and their backtracking decide: a prefix
    // before letters, contractions in both cases, digit runs, punctuation before newlines
    // and slashes, whitespace runs before text, newlines and the end.
    const fragment = fc.constantFrom(
      'a',
      'Z',
      'Hello',
      'HELLOworld',
      "'",
      "'s",
      "'S",
      "'ll",
      "'LL",
      "'Ve",
      "'re",
      "'d",
      "'m",
      "'t",
      "'x",
      '1',
      '42',
      '12345',
      '.',
      '!',
      '/',
      '//',
      '{"',
      '-',
      '_',
      ' ',
      '  ',
      '\t',
      '\n',
      '\r\n',
      '\r',
      '\v',
      '\f',
      '\u0000',
      '\u001f',
      '\u007f',
      ' \n ',
      '\n\n  ',
    );
    const asciiText = fc.oneof(
      fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join('')),
      fc.string({ unit: 'binary-ascii', maxLength: 60 }),
    );

    it('makes the pieces the regex makes', () => {
      fc.assert(
        fc.property(asciiText, (text) => {
          expect(o200kAsciiPieces(text)).toEqual(regexPieces(text));
        }),
        { numRuns: 5000 },
      );
    });

    it('counts what gpt-tokenizer counts', () => {
      fc.assert(
        fc.property(asciiText, (text) => {
          expect(countO200kTokens(text)).toBe(countTokens(text, { disallowedSpecial: new Set() }));
        }),
        { numRuns: 3000 },
      );
      const source = readFileSync(path.join(ROOT, 'apps/gateway/src/app.ts'), 'utf8');
      expect(o200kAsciiPieces(source)).toEqual(regexPieces(source));
    });
  });
});
