import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describeWith, needPostgres, type TestServer } from '@platform/testing';
import { ROOT } from './support/compose';

// Runs infra/postgres/init-databases.sh (what the postgres container runs on its
// first start) against the test server with throwaway names, and checks the
// isolation docs/deploy.md promises: each service's role owns its database and
// cannot even connect to the other's.

const SCRIPT = path.join(ROOT, 'infra', 'postgres', 'init-databases.sh');
// The server: TEST_DATABASE_URL (CI), else a private one started for this file, else one skip line.
const postgres = needPostgres();
let started: TestServer | undefined;
let server: URL | undefined;

const suffix = randomBytes(4).toString('hex');
const first = `e2e_init_${suffix}_a`;
const second = `e2e_init_${suffix}_b`;
const passwords = { [first]: `pw-a-${suffix}'"; x`, [second]: `pw-b-${suffix}` };

function serverEnv(): Record<string, string> {
  if (!server) throw new Error('serverEnv() was called before the server started');
  return {
    PATH: process.env.PATH ?? '',
    PGHOST: server.hostname,
    PGPORT: server.port || '5432',
    PGPASSWORD: decodeURIComponent(server.password),
    POSTGRES_USER: decodeURIComponent(server.username) || 'postgres',
    POSTGRES_DB: 'postgres',
  };
}

function runScript(env: Record<string, string>) {
  return spawnSync('bash', [SCRIPT], { env: { ...serverEnv(), ...env }, encoding: 'utf8' });
}

function psql(user: string, password: string, database: string, sql: string) {
  return spawnSync('psql', ['-X', '-tA', '-U', user, '-d', database, '-c', sql], {
    env: { ...serverEnv(), PGPASSWORD: password },
    encoding: 'utf8',
  });
}

function admin(sql: string) {
  const { POSTGRES_USER, PGPASSWORD } = serverEnv();
  return psql(POSTGRES_USER as string, PGPASSWORD as string, 'postgres', sql);
}

describeWith(postgres)('infra/postgres/init-databases.sh', () => {
  const env = {
    SERVICE_DATABASES: `${first} ${second}`,
    [`${first.toUpperCase()}_DB_PASSWORD`]: passwords[first] as string,
    [`${second.toUpperCase()}_DB_PASSWORD`]: passwords[second] as string,
  };

  let firstRun: ReturnType<typeof runScript>;
  beforeAll(async () => {
    started = await postgres.start();
    server = new URL(started.url);
    firstRun = runScript(env);
  });

  afterAll(async () => {
    if (server) {
      for (const name of [first, second]) {
        admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        admin(`DROP ROLE IF EXISTS "${name}"`);
      }
    }
    await started?.close();
  });

  it('creates one database per service, owned by its own role', () => {
    expect(firstRun.stderr).toBe('');
    expect(firstRun.status).toBe(0);
    const owners = admin(
      `SELECT datname || '=' || pg_get_userbyid(datdba) FROM pg_database WHERE datname IN ('${first}', '${second}') ORDER BY datname`,
    );
    expect(owners.stdout.trim().split('\n')).toEqual([`${first}=${first}`, `${second}=${second}`]);
    const own = psql(
      first,
      passwords[first] as string,
      first,
      'CREATE TABLE t (id int); INSERT INTO t VALUES (1); SELECT current_user || count(*) FROM t',
    );
    expect(own.stdout.trim().split('\n').at(-1)).toBe(`${first}1`);
  });

  it("keeps each role out of the other service's database", () => {
    const other = psql(second, passwords[second] as string, first, 'SELECT 1');
    expect(other.status).not.toBe(0);
    expect(other.stderr).toMatch(/permission denied for database/);
  });

  it('can run again on an initialised server', () => {
    const again = runScript(env);
    expect(again.stderr).toBe('');
    expect(again.status).toBe(0);
  });

  it('refuses to run without the password of a listed service', () => {
    const run = runScript({ SERVICE_DATABASES: `e2e_init_${suffix}_nopw` });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`E2E_INIT_${suffix.toUpperCase()}_NOPW_DB_PASSWORD is not set`);
  });
});
