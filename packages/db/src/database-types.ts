import type { PrismaPg } from '@prisma/adapter-pg';
import type { PrismaPGlite } from 'pglite-prisma-adapter';

/** A raw result row, as the driver (pg or PGlite) parsed it. */
export type Row = Record<string, unknown>;

/** Minimal structured logger; a pino logger fits. */
export type DbLogger = {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
};

/** Raw SQL on one connection. */
export type SqlRunner = {
  /** One statement with `$1`-style parameters; returns the rows. */
  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /** One INSERT, UPDATE or DELETE with `$1`-style parameters; returns the rows it affected. */
  execute(sql: string, params?: unknown[]): Promise<number>;
  /** One or more statements without parameters (simple query protocol). */
  exec(sql: string): Promise<void>;
  /**
   * `COPY <table> (<columns>) FROM STDIN` with `data` as the whole body in
   * COPY's text format (fields separated by tabs, rows ended by newlines,
   * `\N` for null, backslash escapes). One statement: all rows or none. For
   * bulk inserts Postgres parses this about three times cheaper than a JSON
   * array (docs/performance.md, session 15).
   */
  copyFrom(sql: string, data: string): Promise<void>;
};

/**
 * One connection held for a sequence of statements, e.g. a session-level
 * advisory lock followed by several transactions.
 */
export type DbSession = SqlRunner & {
  /** BEGIN … COMMIT on this session; rolls back and rethrows when fn throws. */
  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T>;
};

type DatabaseBase = SqlRunner & {
  /** Runs fn on one dedicated connection (Postgres) or exclusively (PGlite). */
  withSession<T>(fn: (session: DbSession) => Promise<T>): Promise<T>;
  /** A raw-SQL transaction. */
  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T>;
  /** Ends the pool or closes PGlite. Close PrismaClient first. Safe to call twice. */
  close(): Promise<void>;
};

/** A Postgres server through one pg Pool, shared by Prisma and raw SQL. */
export type PostgresDatabase = DatabaseBase & {
  readonly kind: 'postgres';
  /** Pass to `new PrismaClient({ adapter })`. */
  readonly adapter: PrismaPg;
};

/**
 * Embedded PGlite: one in-process connection shared by Prisma and raw SQL.
 * PGlite queues every query behind an open transaction, so never call `query`
 * from inside a Prisma interactive transaction: it would wait for itself.
 */
export type PgliteDatabase = DatabaseBase & {
  readonly kind: 'pglite';
  /** Pass to `new PrismaClient({ adapter })`. */
  readonly adapter: PrismaPGlite;
  /** A copy of the whole data folder, to open more databases from (`snapshot` option). */
  snapshot(): Promise<Blob>;
};

/** An open database: a driver adapter for Prisma plus raw SQL on the same connections. */
export type Database = PostgresDatabase | PgliteDatabase;

export type OpenDatabaseOptions = {
  /** postgresql:// URL; when absent an embedded PGlite is used. */
  url?: string;
  /** PGlite data folder (created if missing); absent means in-memory. Ignored with url. */
  dataDir?: string;
  /**
   * In-memory PGlite only: start from this `snapshot()` instead of creating a new
   * cluster, which takes seconds (tests and tools reuse one migrated snapshot).
   */
  snapshot?: Blob;
  logger?: DbLogger;
  /** Postgres only: most connections this process's pool opens (pg's default: 10). */
  poolMax?: number;
  /** Postgres only: a new connection not made within this fails (answered 503); default 1,500 ms. */
  connectTimeoutMs?: number;
};
