// `migrate deploy` for the production images: applies an app's pending migrations
// with the project's own runner (the `_prisma_migrations` history and advisory lock
// of `prisma migrate deploy`), needing only the runtime dependencies the image
// already holds: no Prisma CLI, no schema engine, nothing downloaded.
//   cd apps/payment && DATABASE_URL=postgresql://… node ../../packages/db/dist/migrate-deploy.js
// In the images (WORKDIR is the app's folder):
//   node ../../packages/db/dist/migrate-deploy.js
// Only `./database` and `./migrate` are imported here: migrate-cli.ts also loads the
// wasm schema engine, a development dependency that the images do not contain.
import path from 'node:path';
import { openDatabase } from './database';
import { applyMigrations } from './migrate';

export const MIGRATE_DEPLOY_USAGE = `usage: migrate-deploy [--app <dir>]
  applies the pending migrations of <dir>/prisma/migrations (default: the current folder's)
database: DATABASE_URL=postgresql://… (or PGLITE_DIR=<folder>)`;

export type MigrateDeployIo = {
  env: Record<string, string | undefined>;
  cwd: string;
  out(line: string): void;
  err(line: string): void;
};

/** Runs `migrate deploy`; returns the exit code (0 applied or nothing pending, 2 bad usage). */
export async function runMigrateDeploy(argv: string[], io: MigrateDeployIo): Promise<number> {
  const appIndex = argv.indexOf('--app');
  const rest = argv.filter((_, i) => appIndex < 0 || (i !== appIndex && i !== appIndex + 1));
  if (rest.length > 0 || (appIndex >= 0 && !argv[appIndex + 1])) {
    io.err(MIGRATE_DEPLOY_USAGE);
    return 2;
  }
  const appDir = path.resolve(io.cwd, appIndex >= 0 ? (argv[appIndex + 1] as string) : '.');
  const { DATABASE_URL: url, PGLITE_DIR: pgliteDir } = io.env;
  if (!url && !pgliteDir) {
    io.err('migrate-deploy needs DATABASE_URL (or PGLITE_DIR)');
    return 2;
  }
  const db = url
    ? await openDatabase({ url })
    : await openDatabase({ dataDir: path.resolve(pgliteDir as string) });
  try {
    const { applied } = await applyMigrations({
      db,
      migrationsDir: path.join(appDir, 'prisma', 'migrations'),
    });
    io.out(applied.length ? `applied: ${applied.join(', ')}` : 'no pending migrations');
    return 0;
  } finally {
    await db.close();
  }
}

if (require.main === module) {
  runMigrateDeploy(process.argv.slice(2), {
    env: process.env,
    cwd: process.cwd(),
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      // The message only: a connection error names host and database, never the password.
      process.stderr.write(`migrate-deploy failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
