import path from 'node:path';
import { openDatabase } from './database';
import { loadPristineSnapshot } from './database-pglite';
import { applyMigrations } from './migrate';
import { diffDatabaseToSchema, diffEmptyToSchema } from './schema-diff';
import type { SchemaEngineTarget } from './schema-engine';
import {
  createMigration,
  diagnoseMigrations,
  type PrismaPaths,
  resolvePrismaPaths,
} from './schema-migrations';

export const MIGRATE_CLI_USAGE = `usage: migrate-dev <command> [--app <dir>]
  create <name>        write prisma/migrations/<timestamp>_<name> for the changes in schema.prisma
  diff [--from-empty]  print the SQL that takes the database to schema.prisma (no database: a
                       throwaway one with the migrations applied, i.e. what \`create\` would write)
  check                exit 1 unless the migrations produce exactly schema.prisma
  status               compare the database's _prisma_migrations with the folder (needs a database)
  deploy               apply pending migrations (needs a database)
database: DATABASE_URL=postgresql://… or PGLITE_DIR=<folder>; default a throwaway in-memory PGlite
app folder: --app <dir>, else the folder npm or the shell was started in`;

export type MigrateCliIo = {
  env: Record<string, string | undefined>;
  cwd: string;
  out(line: string): void;
  err(line: string): void;
};

function pickTarget(env: MigrateCliIo['env']): SchemaEngineTarget | undefined {
  if (env.DATABASE_URL) return { databaseUrl: env.DATABASE_URL };
  if (env.PGLITE_DIR) return { pgliteDir: path.resolve(env.PGLITE_DIR) };
  return undefined;
}

async function openTarget(target: SchemaEngineTarget) {
  if ('databaseUrl' in target) return openDatabase({ url: target.databaseUrl });
  if ('pgliteDir' in target) return openDatabase({ dataDir: target.pgliteDir });
  return target.db;
}

/** The diff from a throwaway database with every migration applied to schema.prisma. */
async function diffMigrated(paths: PrismaPaths) {
  const db = await openDatabase({ snapshot: await loadPristineSnapshot() });
  try {
    await applyMigrations({ db, migrationsDir: paths.migrationsDir });
    return await diffDatabaseToSchema({ db, schemaPath: paths.schemaPath });
  } finally {
    await db.close();
  }
}

/** Runs one command; returns the exit code. */
export async function runMigrateCli(argv: string[], io: MigrateCliIo): Promise<number> {
  const appIndex = argv.indexOf('--app');
  const appDir = path.resolve(io.cwd, appIndex >= 0 ? (argv[appIndex + 1] ?? '.') : '.');
  const args = argv.filter((_, i) => appIndex < 0 || (i !== appIndex && i !== appIndex + 1));
  const [command, name] = args;
  const paths = resolvePrismaPaths(appDir);
  const target = pickTarget(io.env);

  switch (command) {
    case 'create': {
      if (!name || !/^[A-Za-z0-9_]+$/.test(name)) {
        io.err('create needs a name of letters, digits and underscores, e.g. create add_notes');
        return 2;
      }
      const created = await createMigration({ ...paths, name, target });
      io.out(
        created
          ? `created ${path.relative(io.cwd, path.join(paths.migrationsDir, created.name))}`
          : 'no changes',
      );
      return 0;
    }
    case 'diff': {
      let sql: string;
      if (args.includes('--from-empty')) sql = await diffEmptyToSchema({ schemaPath: paths.schemaPath });
      else if (target) sql = await diffDatabaseToSchema({ ...target, schemaPath: paths.schemaPath });
      else sql = await diffMigrated(paths);
      io.out(sql === '' ? '-- no difference' : sql.trimEnd());
      return 0;
    }
    case 'check': {
      const sql = await diffMigrated(paths);
      if (sql === '') {
        io.out('migrations match schema.prisma');
        return 0;
      }
      io.err(
        `schema.prisma has changes without a migration (run: migrate-dev create <name>):\n${sql.trimEnd()}`,
      );
      return 1;
    }
    case 'status':
    case 'deploy': {
      if (!target) {
        io.err(`${command} needs DATABASE_URL or PGLITE_DIR`);
        return 2;
      }
      if (command === 'status') {
        const status = await diagnoseMigrations({ ...paths, target });
        io.out(JSON.stringify(status, null, 2));
        const clean = status.history === null && status.failedMigrationNames.length === 0;
        return clean && status.editedMigrationNames.length === 0 ? 0 : 1;
      }
      const db = await openTarget(target);
      try {
        const { applied } = await applyMigrations({ db, migrationsDir: paths.migrationsDir });
        io.out(applied.length ? `applied: ${applied.join(', ')}` : 'no pending migrations');
      } finally {
        await db.close();
      }
      return 0;
    }
    default:
      io.err(MIGRATE_CLI_USAGE);
      return command ? 2 : 0;
  }
}
