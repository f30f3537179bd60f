import type { Redis } from 'ioredis';

/**
 * How a client's commands reach the socket, in place of ioredis's
 * auto-pipelining and with the same batches: what is issued while the event
 * loop's turn runs goes out in one write when the turn ends (setImmediate),
 * and while Redis still owes replies on the connection, what is issued is
 * held in the socket (corked) and written together, in one syscall, when the
 * last reply owed arrives (one batch in flight). Commands keep their order,
 * and Redis answers them in it.
 *
 * Why not ioredis's auto-pipelining itself: per batch it builds a Pipeline
 * (which copies every defined script onto itself), per command a promise, a
 * callback and a second Command, and hands each reply back through its own
 * process.nextTick. A chat request makes two round trips to Redis; at one
 * connection that machinery was ~7 % of the gateway's CPU per request
 * (bench/results, session 22). Here the batch is the socket's own cork.
 *
 * A pipeline's or MULTI's commands are held and counted like the client's
 * own (its batch is written to the same socket, corked or not). A
 * reconnect starts clean: the old socket is gone, with what it held, and
 * ioredis resends or fails those commands as it does without batching.
 * A blocking command (BLPOP, XREAD BLOCK) would hold every later command
 * until it returns: clients that block get their own connection
 * (`redis.duplicate()`, which this does not touch).
 */
export function batchWritesWhileRepliesOwed(redis: Redis): void {
  type Socket = Redis['stream'];
  const send = redis.sendCommand.bind(redis);
  let watched: Socket | null = null;
  /** The socket corked, and until when: the turn's end, or the last reply owed. */
  let corked: Socket | null = null;
  let until: 'turn' | 'replies' = 'turn';
  /** Commands written into the corked socket (counted in `commandQueue` already). */
  let held = 0;

  const uncork = () => {
    const socket = corked;
    corked = null;
    held = 0;
    socket?.uncork();
  };
  const turnEnded = () => {
    if (until === 'turn') uncork();
  };
  // After ioredis's own 'data' listener (added on connect) has taken the replies off `commandQueue`.
  const repliesIn = () => {
    if (corked !== null && until === 'replies' && redis.commandQueue.length <= held) uncork();
  };
  redis.on('ready', () => {
    const socket = redis.stream;
    if (socket === watched) return;
    watched = socket;
    corked = null;
    held = 0;
    socket.on('data', repliesIn);
  });
  redis.on('close', () => {
    corked = null;
    held = 0;
  });

  redis.sendCommand = ((
    command: Parameters<Redis['sendCommand']>[0],
    stream?: unknown,
    ...rest: unknown[]
  ) => {
    const socket = redis.stream;
    if (socket === watched && redis.status === 'ready' && writesToOwnSocket(stream)) {
      if (corked === socket) held += 1;
      else {
        socket.cork();
        corked = socket;
        held = 1;
        if (redis.commandQueue.length > 0) until = 'replies';
        else {
          until = 'turn';
          setImmediate(turnEnded);
        }
      }
    }
    return (send as (...args: unknown[]) => unknown)(command, stream, ...rest);
  }) as Redis['sendCommand'];

  /**
   * Whether a command goes to this client's socket: its own (no stream), or a
   * pipeline's or MULTI's of this client, which writes its batch there at once.
   * Each is counted among the commands held, or the last reply owed could never
   * be told from theirs.
   */
  function writesToOwnSocket(stream: unknown): boolean {
    if (stream === undefined) return true;
    const pipeline = stream as { isPipeline?: boolean; destination?: { redis?: unknown } };
    return pipeline.isPipeline === true && pipeline.destination?.redis === redis;
  }
}
