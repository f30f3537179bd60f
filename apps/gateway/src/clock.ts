/**
 * Milliseconds since the epoch. The gateway's one way to read the time:
 * buildGatewayDeps creates it (tests pass their own to move time) and hands
 * it to everything that reads the time: sessions, codes, key caches,
 * cooldowns, deadlines, latencies.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
