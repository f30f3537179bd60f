/**
 * Text that arrives piece by piece (a streamed answer), held compactly.
 *
 * A string grown by `+=` is a chain of V8 cons cells that keeps every piece
 * as its own string, and an array of the pieces keeps them too: ~50 bytes
 * per piece besides its characters, for the whole life of the stream. At
 * thousands of open streams of long answers (hundreds of one-token chunks
 * each) that is most of what a stream holds (issue 46, heap snapshots with
 * 2,000 open streams). Here every COMPACT_AT recent pieces are joined into
 * one flat string, so a stream holds its characters and a few string
 * headers; each character is copied once when compacted and once more when
 * the whole text is read.
 */
export class TextPieces {
  private static readonly COMPACT_AT = 64;
  /** Joined runs of COMPACT_AT pieces, oldest first. */
  private runs: string[] = [];
  /** Pieces since the last run. */
  private recent: string[] = [];
  private chars = 0;

  push(piece: string): void {
    if (piece.length === 0) return;
    this.recent.push(piece);
    this.chars += piece.length;
    if (this.recent.length >= TextPieces.COMPACT_AT) {
      this.runs.push(this.recent.join(''));
      this.recent = [];
    }
  }

  /** Characters pushed so far. */
  get length(): number {
    return this.chars;
  }

  /** The whole text (kept as one string until more is pushed). */
  text(): string {
    if (this.runs.length + this.recent.length > 1) {
      this.runs = [this.runs.join('') + this.recent.join('')];
      this.recent = [];
    } else if (this.recent.length === 1) {
      this.runs = [this.recent[0] as string];
      this.recent = [];
    }
    return this.runs[0] ?? '';
  }
}
