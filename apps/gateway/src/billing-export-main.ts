import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openServiceStorage } from '@platform/db';
import { createLogger } from '@platform/logging';
import { loadEnvOrExit, runCommand, storageTimeouts } from '@platform/service-kit';
import { loadLanesConfig } from './ai/config/lanes';
import { billingRulesOf } from './billing/billing';
import { ledgerTotals } from './billing/ledger-totals';
import { loadGatewayEnv } from './env';
import { PrismaClient } from './generated/prisma/client';

const USAGE = `usage: billing-export [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--out FILE]
  Prints, as a JSON array of {user_id, day, meter?, value}, what the gateway's usage
  ledger says Stripe should count per user, meter and UTC day (the shipper's rules),
  for days from..to inclusive (default: yesterday, UTC), on stdout or into FILE. Pipe it
  into payment's reconcile: billing-export | reconcile --expected -`;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * `node dist/billing-export-main.js [--from D] [--to D]`: the gateway's part of
 * the three-way reconciliation (docs/billing.md), with the gateway's own
 * environment and lanes config. Logs go to stderr, the JSON to stdout.
 * Exit codes: 0 printed, 2 bad arguments, 3 the ledger could not be read.
 */
async function main(): Promise<number> {
  let values: { from?: string; to?: string; out?: string };
  try {
    ({ values } = parseArgs({
      options: { from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' } },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const from = values.from ?? values.to ?? yesterday;
  const to = values.to ?? from;
  if (!DAY.test(from) || !DAY.test(to) || from > to) {
    process.stderr.write(`bad --from/--to\n${USAGE}\n`);
    return 2;
  }
  const env = loadEnvOrExit('gateway-billing-export', () => loadGatewayEnv());
  const lanes = loadLanesConfig(env.AI_LANES_CONFIG, env.AI_ALLOWED_LANES);
  const logger = createLogger({
    service: 'gateway-billing-export',
    level: env.LOG_LEVEL,
    destination: process.stderr,
  });
  const storage = await openServiceStorage({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    ...storageTimeouts(env),
    keyPrefix: env.REDIS_KEY_PREFIX,
    migrationsDir: path.join(__dirname, '..', 'prisma', 'migrations'),
    logger,
  });
  const prisma = new PrismaClient({ adapter: storage.db.adapter });
  try {
    const end = new Date(`${to}T00:00:00.000Z`);
    end.setUTCDate(end.getUTCDate() + 1);
    const totals = await ledgerTotals(prisma, billingRulesOf(env, lanes), {
      from: new Date(`${from}T00:00:00.000Z`),
      to: end,
    });
    const json = `${JSON.stringify(totals)}\n`;
    if (values.out) await writeFile(values.out, json);
    else process.stdout.write(json);
    return 0;
  } catch (err) {
    logger.error({ err }, 'the usage ledger could not be read');
    return 3;
  } finally {
    await prisma.$disconnect();
    await storage.close();
  }
}

runCommand(main, (err) => (err as Error)?.stack ?? String(err));
