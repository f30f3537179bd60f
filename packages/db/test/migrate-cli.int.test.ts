import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type MigrateCliIo, runMigrateCli } from '../src/migrate-cli';

function createIo(cwd: string, env: MigrateCliIo['env'] = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { env, cwd, out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

async function copyPaymentApp(): Promise<string> {
  const appDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cli-app-'));
  await fs.cp(path.resolve(__dirname, 'fixtures/payment-init/prisma'), path.join(appDir, 'prisma'), {
    recursive: true,
  });
  return appDir;
}

describe('migrate-dev CLI', () => {
  it('check fails on a schema change without migration, create adds it, then check passes', async () => {
    const appDir = await copyPaymentApp();
    await fs.appendFile(
      path.join(appDir, 'prisma/schema.prisma'),
      '\nmodel Tag {\n  id String @id\n  @@map("tags")\n}\n',
    );

    const before = createIo(appDir);
    expect(await runMigrateCli(['check'], before.io)).toBe(1);
    expect(before.err.join('\n')).toContain('CREATE TABLE "tags"');

    const create = createIo(os.tmpdir());
    expect(await runMigrateCli(['create', 'add_tags', '--app', appDir], create.io)).toBe(0);
    expect(create.out[0]).toMatch(/^created .*prisma\/migrations\/\d{14}_add_tags$/);

    const after = createIo(appDir);
    expect(await runMigrateCli(['check'], after.io)).toBe(0);
    expect(after.out).toEqual(['migrations match schema.prisma']);
  }, 120_000);

  it('deploy then status on a PGlite folder reports an up-to-date history', async () => {
    const appDir = await copyPaymentApp();
    const env = { PGLITE_DIR: path.join(appDir, '.data/pg') };
    const deploy = createIo(appDir, env);
    expect(await runMigrateCli(['deploy'], deploy.io)).toBe(0);
    expect(deploy.out).toEqual(['applied: 20261122000018_init']);
    const status = createIo(appDir, env);
    expect(await runMigrateCli(['status'], status.io)).toBe(0);
    expect(JSON.parse(status.out[0] ?? '{}')).toMatchObject({ history: null, hasMigrationsTable: true });
  }, 120_000);

  it('refuses bad usage with exit code 2', async () => {
    const appDir = await copyPaymentApp();
    const noDb = createIo(appDir);
    expect(await runMigrateCli(['status'], noDb.io)).toBe(2);
    expect(noDb.err).toEqual(['status needs DATABASE_URL or PGLITE_DIR']);
    const badName = createIo(appDir);
    expect(await runMigrateCli(['create', 'bad name!'], badName.io)).toBe(2);
    const unknown = createIo(appDir);
    expect(await runMigrateCli(['frobnicate'], unknown.io)).toBe(2);
    expect(unknown.err[0]).toMatch(/^usage: migrate-dev/);
  });
});
