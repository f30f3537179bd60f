/** One dispatched server-sent event. */
export type SseEvent = { event: string; data: string; id?: string };

/**
 * Incremental parser of a `text/event-stream` body, following the WHATWG
 * "event stream interpretation": lines end in CRLF, LF or CR (also when the CR
 * and LF arrive in different chunks), `data` lines of one event are joined with
 * LF, lines starting with `:` are comments (keep-alives), and an event is
 * dispatched at a blank line. An event cut off by the end of the body is dropped.
 */
export class SseParser {
  private buffer = '';
  private pendingCr = false;
  private eventName = '';
  private data: string[] = [];
  private lastId: string | undefined;

  /** Feeds decoded text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let chunk = text;
    if (this.pendingCr) {
      this.pendingCr = false;
      if (chunk.startsWith('\n')) chunk = chunk.slice(1);
    }
    this.buffer += chunk;
    let start = 0;
    for (;;) {
      const end = findLineEnd(this.buffer, start);
      if (end === -1) break;
      this.processLine(this.buffer.slice(start, end), events);
      if (this.buffer[end] === '\r') {
        if (end + 1 === this.buffer.length) {
          this.pendingCr = true;
          start = end + 1;
          continue;
        }
        start = this.buffer[end + 1] === '\n' ? end + 2 : end + 1;
      } else {
        start = end + 1;
      }
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private processLine(line: string, events: SseEvent[]): void {
    if (line === '') {
      this.dispatch(events);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.eventName = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    // `retry` and unknown fields only matter to EventSource reconnection, which a POST stream does not do.
  }

  private dispatch(events: SseEvent[]): void {
    const hasData = this.data.length > 0;
    const event = this.eventName || 'message';
    const data = this.data.join('\n');
    this.eventName = '';
    this.data = [];
    if (!hasData) return;
    events.push(this.lastId === undefined ? { event, data } : { event, data, id: this.lastId });
  }
}

function findLineEnd(buffer: string, from: number): number {
  for (let i = from; i < buffer.length; i += 1) {
    const c = buffer.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return -1;
}
