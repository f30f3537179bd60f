import { Command } from 'ioredis';

/**
 * ioredis's command time-out (`commandTimeout`), made to tell a slow Redis
 * from a slow event loop.
 *
 * Node runs expired timers before it reads its sockets in each turn of the
 * loop, and a command issued in one turn reaches the socket when that turn
 * ends (redis-write-batching.ts). When turns run long (a burst of streams
 * starving the host: turns of 660-720 ms were measured), a command whose reply
 * took Redis a millisecond can see its 750 ms timer fire first, with the
 * reply unread in the socket, or the command barely written: ioredis rejects
 * it with "Command timed out", the request is answered 503, and a script Redis
 * did run (a budget reservation, a usage record) is reported as failed.
 *
 * Here the timer, when it fires late (the loop was busy elsewhere by at least
 * `LATE_MS`), waits again as long as it was late (at most the time-out
 * itself), so the loop reads what arrived meanwhile before anything is
 * decided; a timer that fires on time with no answer fails the command as
 * before. However late the loop keeps running, a command fails by
 * `GIVE_UP_FACTOR` times its time-out and `LATE_MS` more: a Redis that hangs is
 * still found. That last wait matters: a give-up timer that fires late runs
 * before the turn's poll phase, so a reply that arrived while the loop was
 * busy is read before the command is failed (found at 2,000 streams: a few
 * 503s "Command timed out" while workers took ~5 s to first chunks), and a
 * command only written when the stall ended gets a round trip.
 *
 * Installed once for the process, on ioredis's `Command` (every client, their
 * duplicates and pipelines). The timer stays in ioredis's own field, so
 * ioredis still clears it when the command settles; the test
 * (`redis-lag-tolerant-timeout.int.test.ts`) pins that against the installed
 * ioredis.
 */
export function tolerateLoopLagInCommandTimeouts(): void {
  const proto = Command.prototype as unknown as TimedCommand;
  if (proto.setTimeout === lagTolerantSetTimeout) return;
  proto.setTimeout = lagTolerantSetTimeout;
}

/** A timer this much past its time means the loop was busy: what Redis sent may be unread. */
const LATE_MS = 20;
/** However late the loop, a command fails once this many of its time-outs have passed. */
const GIVE_UP_FACTOR = 4;

type TimedCommand = {
  isSettled: boolean;
  reject(err: Error): void;
  setTimeout(ms: number): void;
  _commandTimeoutTimer?: NodeJS.Timeout;
};

function lagTolerantSetTimeout(this: TimedCommand, ms: number): void {
  if (this._commandTimeoutTimer) return;
  const now = performance.now();
  this._commandTimeoutTimer = setTimeout(timerFired, ms, this, now + ms, ms, now + GIVE_UP_FACTOR * ms);
}

function timerFired(command: TimedCommand, dueAt: number, ms: number, giveUpAt: number): void {
  if (command.isSettled) return;
  const now = performance.now();
  const late = now - dueAt;
  if (late >= LATE_MS && now < giveUpAt) {
    const wait = Math.min(late, ms, giveUpAt - now);
    command._commandTimeoutTimer = setTimeout(timerFired, wait, command, now + wait, ms, giveUpAt);
    return;
  }
  if (late >= LATE_MS) {
    // Given up, but this timer ran late, before the loop's poll phase of this
    // turn: a reply Redis sent meanwhile may sit unread in the socket, and a
    // command issued just before the stall is only written as it ends (its
    // turn's end). Decide after LATE_MS more, which the poll phase spends
    // reading: one turn (~1 ms) was less than a starved host's Redis takes to
    // answer (CI saw a command fail that way).
    command._commandTimeoutTimer = setTimeout(failIfUnsettled, LATE_MS, command);
    return;
  }
  command.reject(new Error('Command timed out'));
}

function failIfUnsettled(command: TimedCommand): void {
  if (command.isSettled) return;
  command.reject(new Error('Command timed out'));
}
