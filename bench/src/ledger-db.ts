import { GATEWAY_MIGRATIONS_DIR, PrismaClient } from '@platform/gateway/testing';
import { createTestDatabase, type TestDatabase } from '@platform/testing';

/**
 * Runs a bench of the usage ledger's tables against a fresh database with the
 * gateway's schema (on TEST_DATABASE_URL's server, else PGlite in memory),
 * dropped afterwards whatever happens; a failure is printed and exits 1.
 */
export function runOnLedgerDatabase(
  bench: (prisma: PrismaClient, database: TestDatabase) => Promise<void>,
): void {
  const main = async () => {
    const database = await createTestDatabase({ migrationsDir: GATEWAY_MIGRATIONS_DIR });
    const prisma = new PrismaClient({ adapter: database.adapter });
    try {
      await bench(prisma, database);
    } finally {
      await prisma.$disconnect();
      await database.drop();
    }
  };
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
