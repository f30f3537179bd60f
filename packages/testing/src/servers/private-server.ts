import type { TestServer } from './need';

/**
 * A Redis or Postgres server that one test file owns, on its own port and data
 * directory, so a fault test can stop and restart it without touching the
 * servers other tests use.
 */
export type PrivateServer = TestServer & {
  port: number;
  shared: false;
  /** Stops the server (connections are refused until start()). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
};
