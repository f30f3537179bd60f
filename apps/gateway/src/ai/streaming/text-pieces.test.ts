import { TextPieces } from './text-pieces';

describe('TextPieces', () => {
  it('gives back what was pushed, in order, across compactions and reads', () => {
    const pieces = new TextPieces();
    expect(pieces.text()).toBe('');
    let expected = '';
    for (let i = 0; i < 300; i += 1) {
      const piece = i % 7 === 0 ? '' : `p${i} `;
      pieces.push(piece);
      expected += piece;
      expect(pieces.length).toBe(expected.length);
      // Reads in the middle (a continuation reads the answer so far) do not change what follows.
      if (i % 97 === 0) expect(pieces.text()).toBe(expected);
    }
    expect(pieces.text()).toBe(expected);
    expect(pieces.text()).toBe(expected);
  });

  it('keeps a single piece as it is', () => {
    const pieces = new TextPieces();
    pieces.push('only');
    expect(pieces.text()).toBe('only');
    expect(pieces.length).toBe(4);
  });
});
