import { existsSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import path from 'node:path';

/**
 * A port that was free a moment ago, taken below the kernel's ephemeral range.
 * A port from `listen(0)` lies inside that range, and any outgoing connection
 * (npm, a client, the database pool) may take it in the seconds before the test's
 * server binds it: nginx then fails with "Address already in use". Ports below
 * the range are never handed out that way. Each port is handed out once per
 * process, and each Jest worker draws from its own slice of the range
 * (portSlice), so two test files running at once cannot be handed the same
 * port in the seconds before its server binds it: with one shared range, a
 * gateway started by one worker found its port taken by another's
 * (EADDRINUSE, e2e with three workers). Where the range leaves too little room
 * below it, `listen(0)` is used.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const [from, to] = portSlice(FIXED_PORTS_FROM, low, process.env.JEST_WORKER_ID);
  if (to - from >= 100) {
    for (let tries = 0; tries < 50; tries++) {
      const port = from + Math.floor(Math.random() * (to - from));
      if (handedOut.has(port)) continue;
      // Taken before the check, so that calls made at once never pick the same port.
      handedOut.add(port);
      if (await canBind(port)) return port;
      handedOut.delete(port);
    }
  }
  return anyPort();
}

const FIXED_PORTS_FROM = 15000;
/** Slices of the fixed range: more than any machine here runs Jest workers at once. */
const PORT_SLICES = 16;
const handedOut = new Set<number>();

/**
 * The part [from, to) of the fixed ports [low, high) that a process draws from:
 * Jest worker N (JEST_WORKER_ID, from 1) its own 1/16th, wrapping past 16;
 * outside Jest, the whole range.
 */
export function portSlice(low: number, high: number, workerId: string | undefined): [number, number] {
  const id = Number(workerId);
  if (!Number.isInteger(id) || id < 1) return [low, high];
  const size = Math.floor((high - low) / PORT_SLICES);
  const from = low + ((id - 1) % PORT_SLICES) * size;
  return [from, from + size];
}

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (
      typeof low === 'number' &&
      typeof high === 'number' &&
      Number.isInteger(low) &&
      Number.isInteger(high)
    )
      return [low, high];
  } catch {
    // not Linux: fall through to the IANA range's start
  }
  return [49152, 65535];
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function anyPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether an executable of that name is on PATH. */
export function onPath(name: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir !== '' && existsSync(path.join(dir, name)));
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Polls `check` until it is true, or fails naming `what` after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
