import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** One `prisma/migrations/<name>/migration.sql` folder. */
export type MigrationFile = {
  /** Folder name, e.g. `20261122000018_init`. */
  name: string;
  sql: string;
  /** SHA-256 hex of the migration.sql bytes, as Prisma stores it. */
  checksum: string;
  /** The raw bytes, kept to compare checksums the way Prisma does. */
  bytes: Buffer;
};

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Whether a stored checksum matches the file. Like Prisma, a file whose line
 * endings were converted (git autocrlf) after it was applied still matches.
 */
export function matchesChecksum(file: MigrationFile, checksum: string): boolean {
  if (file.checksum === checksum) return true;
  const text = file.bytes.toString('utf8');
  const lf = text.replace(/\r\n/g, '\n');
  return sha256Hex(lf) === checksum || sha256Hex(lf.replace(/\n/g, '\r\n')) === checksum;
}

/**
 * Reads the migration folders in name order. Refuses a migrations folder whose
 * lock file names another provider, and a migration folder without its SQL file.
 */
export async function readMigrationFiles(migrationsDir: string): Promise<MigrationFile[]> {
  const entries = await fs
    .readdir(migrationsDir, { withFileTypes: true })
    .catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new Error(`Migrations folder not found: ${migrationsDir}`);
      throw err;
    });
  const lock = await fs.readFile(path.join(migrationsDir, 'migration_lock.toml'), 'utf8').catch(() => null);
  const provider = lock?.match(/^\s*provider\s*=\s*"([^"]*)"/m)?.[1];
  if (provider !== undefined && provider !== 'postgresql') {
    throw new Error(`migration_lock.toml is for provider "${provider}", this database is postgresql`);
  }
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const file = path.join(migrationsDir, name, 'migration.sql');
      const bytes = await fs.readFile(file).catch(() => {
        throw new Error(`Migration ${name} has no readable migration.sql (${file})`);
      });
      return { name, bytes, sql: bytes.toString('utf8'), checksum: sha256Hex(bytes) };
    }),
  );
}
