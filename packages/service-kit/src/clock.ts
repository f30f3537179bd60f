/**
 * Milliseconds since the epoch: a service's one way to read the time. The
 * composition root builds it (`systemClock`) and hands it to everything
 * that decides by the time (sessions, caches, cooldowns, deadlines,
 * latencies); tests pass their own to move time.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
