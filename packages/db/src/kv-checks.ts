// Argument checks shared by both adapters, so they fail the same way on bad input.

export function checkTtl(ttlMs: number, name = 'ttlMs'): number {
  if (!Number.isFinite(ttlMs) || ttlMs < 1) throw new RangeError(`${name} must be a positive number of ms`);
  return Math.ceil(ttlMs);
}

export function checkIncrement(by: number): number {
  if (!Number.isSafeInteger(by)) throw new RangeError('by must be an integer');
  return by;
}
