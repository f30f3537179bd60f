import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type MigrateDeployIo, runMigrateDeploy } from '../src/migrate-deploy';

function createIo(cwd: string, env: MigrateDeployIo['env'] = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { env, cwd, out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe("migrate-deploy (the images' migration command)", () => {
  it('applies pending migrations once, then finds none pending', async () => {
    const appDir = await fs.mkdtemp(path.join(os.tmpdir(), 'deploy-app-'));
    await fs.cp(path.resolve(__dirname, 'fixtures/payment-init/prisma'), path.join(appDir, 'prisma'), {
      recursive: true,
    });
    const env = { PGLITE_DIR: path.join(appDir, '.data/pg') };
    const first = createIo(os.tmpdir(), env);
    expect(await runMigrateDeploy(['--app', appDir], first.io)).toBe(0);
    expect(first.out).toEqual([expect.stringMatching(/^applied: \d{14}_init/)]);
    const again = createIo(appDir, env);
    expect(await runMigrateDeploy([], again.io)).toBe(0);
    expect(again.out).toEqual(['no pending migrations']);
  }, 120_000);

  it('refuses to run without a database or with unknown arguments (exit 2)', async () => {
    const none = createIo(os.tmpdir());
    expect(await runMigrateDeploy([], none.io)).toBe(2);
    expect(none.err).toEqual(['migrate-deploy needs DATABASE_URL (or PGLITE_DIR)']);
    const extra = createIo(os.tmpdir(), { DATABASE_URL: 'postgresql://x@127.0.0.1:1/x' });
    expect(await runMigrateDeploy(['deploy'], extra.io)).toBe(2);
    expect(await runMigrateDeploy(['--app'], extra.io)).toBe(2);
  });
});
