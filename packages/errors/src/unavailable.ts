/**
 * Recognises the errors a database or key-value store client raises when its
 * server is down, unreachable or too slow, so that the error handler answers
 * 503 `service unavailable` (retry later) instead of 500 (our bug).
 *
 * Matched by the clients' own error codes, names and fixed messages (ioredis, pg,
 * Prisma with a driver adapter), following `cause` a few levels deep, since
 * Prisma and our stores wrap the driver's error.
 */

/** Socket-level failures and Postgres' connection-exception / shutdown SQLSTATEs. */
const CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  // Postgres SQLSTATE class 08 (connection exception) and 57P0x (server shutting down).
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  // Prisma: cannot reach / timed out / closed the connection / pool timeout.
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
]);

const NAMES = new Set(['MaxRetriesPerRequestError', 'PrismaClientInitializationError']);

/** Prisma driver-adapter error kinds that mean the database cannot be reached. */
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'DatabaseDoesNotExist',
]);

const MESSAGES = [
  // ioredis
  'Command timed out',
  'Connection is closed',
  "Stream isn't writeable",
  'Reached the max retries per request limit',
  // pg
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'the database system is',
  // Prisma
  "Can't reach database server",
  'Server has closed the connection',
];

type ErrorLike = { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; kind?: unknown };

function matches(e: ErrorLike): boolean {
  if (typeof e.code === 'string' && CODES.has(e.code)) return true;
  if (typeof e.name === 'string' && NAMES.has(e.name)) return true;
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
  if (typeof e.message === 'string') {
    const message = e.message;
    if (MESSAGES.some((m) => message.includes(m))) return true;
  }
  return false;
}

/** True when `err` (or an error it wraps) says a backing server is unavailable. */
export function isDependencyUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const e = current as ErrorLike;
    if (matches(e)) return true;
    // AggregateError (e.g. a connect to both IPv4 and IPv6 refused).
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.some((x) => typeof x === 'object' && x !== null && matches(x)))
      return true;
    current = e.cause;
  }
  return false;
}
