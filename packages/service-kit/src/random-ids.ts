import { randomFillSync } from 'node:crypto';

/** Random bytes drawn at once; each refill gives 128 trace ids or 256 span ids. */
const POOL_BYTES = 4096;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * Trace and span ids for startTracing's SDK: 16 and 8 random bytes in
 * lowercase hex, as the SDK's own generator gives, but cut from a pool of
 * random hex filled 4 KB at a time (from the system's CSPRNG, where the SDK's
 * uses Math.random). The SDK's generator writes and hex-encodes a buffer per
 * id, a native call each, four or five per gateway request at 100 % sampling;
 * here an id is a substring, which V8 makes without copying.
 */
export class PooledIdGenerator {
  private readonly bytes = Buffer.allocUnsafe(POOL_BYTES);
  private pool = '';
  private at = 0;

  private take(chars: number): string {
    if (this.at + chars > this.pool.length) {
      this.pool = randomFillSync(this.bytes).toString('hex');
      this.at = 0;
    }
    const id = this.pool.substring(this.at, this.at + chars);
    this.at += chars;
    return id;
  }

  generateTraceId(): string {
    const id = this.take(32);
    // All zeros is the invalid id (a chance of 2^-128): draw again.
    return id === ZERO_TRACE_ID ? this.generateTraceId() : id;
  }

  generateSpanId(): string {
    const id = this.take(16);
    return id === ZERO_SPAN_ID ? this.generateSpanId() : id;
  }
}
