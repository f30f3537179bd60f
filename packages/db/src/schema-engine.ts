import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type * as Wasm from '@prisma/schema-engine-wasm/schema_engine_bg';
import pg from 'pg';
import { loadPristineSnapshot } from './database-pglite';
import type { Database } from './database-types';

// Development and test tooling: Prisma's schema engine compiled to WebAssembly,
// driven through a driver adapter, because the native engine cannot be downloaded
// here. Everything engine-related is imported lazily: the wasm package is a dev
// dependency and production never loads this path.

/** Which database the engine inspects. */
export type SchemaEngineTarget =
  | { databaseUrl: string }
  /** A PGlite data folder. */
  | { pgliteDir: string }
  /** An open database; PGlite in memory works here, and Postgres for everything but a shadow database. */
  | { db: Database };

type AdapterFactory = {
  provider: 'postgres';
  adapterName: string;
  connect(): Promise<unknown>;
  connectToShadowDb(): Promise<unknown>;
};

// The WebAssembly global is not in the ES lib typings this project compiles with.
type WasmApi = {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, object>) => { exports: Record<string, unknown> };
};
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let runtime: Promise<typeof Wasm> | undefined;

function loadRuntime(): Promise<typeof Wasm> {
  runtime ??= (async () => {
    const rt = await import('@prisma/schema-engine-wasm/schema_engine_bg');
    const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const bytes = await fs.readFile(path.join(dir, 'schema_engine_bg.wasm'));
    const instance = new wasmApi.Instance(new wasmApi.Module(new Uint8Array(bytes)), {
      './schema_engine_bg.js': rt,
    });
    rt.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return rt;
  })();
  return runtime;
}

let charPatched = false;

/**
 * @prisma/adapter-pg 7.10 cannot decode Postgres' internal `"char"` type (OID 18),
 * which the engine's catalog queries return; read it as bpchar (text). Global to
 * the `pg` module, so applied only when the engine talks to Postgres.
 */
export function patchPgCharType(): void {
  if (charPatched) return;
  charPatched = true;
  const proto = pg.Result.prototype as unknown as { addFields(fields: pg.FieldDef[]): void };
  const addFields = proto.addFields;
  proto.addFields = function patchedAddFields(this: unknown, fields: pg.FieldDef[]) {
    for (const field of fields) if (field.dataTypeID === 18) field.dataTypeID = 1042;
    return addFields.call(this, fields);
  };
}

function parseUrl(databaseUrl: string): pg.PoolConfig {
  const u = new URL(databaseUrl);
  // Discrete fields, not connectionString: pg lets a connection string override
  // `database`, which would point the shadow database back at the main one.
  return {
    host: decodeURIComponent(u.hostname),
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username) || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    database: decodeURIComponent(u.pathname.slice(1)) || undefined,
  };
}

async function createPostgresFactory(databaseUrl: string) {
  const { PrismaPg } = await import('@prisma/adapter-pg');
  patchPgCharType();
  const config = parseUrl(databaseUrl);
  const pool = new pg.Pool(config);
  const main = new PrismaPg(pool);
  const factory: AdapterFactory = {
    provider: 'postgres',
    adapterName: main.adapterName,
    connect: () => main.connect(),
    // adapter-pg's own shadow database is dropped before its pool closes ("being
    // accessed by other users"): close first, then drop WITH (FORCE).
    async connectToShadowDb() {
      const name = `prisma_migrate_shadow_db_${randomUUID().replace(/-/g, '')}`;
      const admin = new pg.Client(config);
      await admin.connect();
      await admin.query(`CREATE DATABASE "${name}"`);
      const shadowPool = new pg.Pool({ ...config, database: name });
      // DROP ... WITH (FORCE) below ends any connection the engine still holds;
      // pg reports that as an 'error' event, which must not crash the process.
      shadowPool.on('error', () => undefined);
      const shadow = await new PrismaPg(shadowPool).connect();
      const dispose = shadow.dispose.bind(shadow);
      shadow.dispose = async () => {
        await dispose();
        await shadowPool.end();
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.end();
      };
      return shadow;
    },
  };
  return { factory, dispose: () => pool.end() };
}

async function loadPglite() {
  const [{ PGlite }, { PrismaPGlite }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('pglite-prisma-adapter'),
  ]);
  return { PGlite, PrismaPGlite };
}

/** pglite-prisma-adapter's own shadow database is never closed; this one closes on dispose. */
async function connectPgliteShadow() {
  const { PGlite, PrismaPGlite } = await loadPglite();
  const pglite = new PGlite({ loadDataDir: await loadPristineSnapshot() });
  const shadow = await new PrismaPGlite(pglite).connect();
  const dispose = shadow.dispose.bind(shadow);
  shadow.dispose = async () => {
    await dispose();
    await pglite.close();
  };
  return shadow;
}

async function createFactory(
  target: SchemaEngineTarget,
): Promise<{ factory: AdapterFactory; dispose(): Promise<void> }> {
  if ('databaseUrl' in target) return createPostgresFactory(target.databaseUrl);
  if ('pgliteDir' in target) {
    const { PGlite, PrismaPGlite } = await loadPglite();
    await fs.mkdir(target.pgliteDir, { recursive: true });
    const pglite = new PGlite(target.pgliteDir);
    const main = new PrismaPGlite(pglite);
    const factory: AdapterFactory = {
      provider: 'postgres',
      adapterName: main.adapterName,
      connect: () => main.connect(),
      connectToShadowDb: connectPgliteShadow,
    };
    return { factory, dispose: () => pglite.close() };
  }
  const { db } = target;
  if (db.kind === 'postgres') patchPgCharType();
  const factory: AdapterFactory = {
    provider: 'postgres',
    adapterName: db.adapter.adapterName,
    connect: () => db.adapter.connect(),
    connectToShadowDb: () =>
      db.kind === 'pglite'
        ? connectPgliteShadow()
        : Promise.reject(new Error('A shadow database needs { databaseUrl } rather than { db }')),
  };
  return { factory, dispose: async () => undefined };
}

/** The schema files as the engine takes them. */
export type SchemaFiles = { files: { path: string; content: string }[] };

export async function readSchemaFiles(schemaPath: string): Promise<SchemaFiles> {
  return { files: [{ path: schemaPath, content: await fs.readFile(schemaPath, 'utf8') }] };
}

/** The migrations folder as the engine takes it. */
export async function readEngineMigrationsList(migrationsDir: string): Promise<Wasm.MigrationList> {
  const lock = await fs.readFile(path.join(migrationsDir, 'migration_lock.toml'), 'utf8').catch(() => null);
  const entries = await fs.readdir(migrationsDir, { withFileTypes: true }).catch(() => []);
  const dirs = entries
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  return {
    baseDir: migrationsDir,
    lockfile: { path: 'migration_lock.toml', content: lock },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      dirs.map(async (dir) => ({
        path: dir,
        migrationFile: {
          path: 'migration.sql',
          content: await fs.readFile(path.join(migrationsDir, dir, 'migration.sql'), 'utf8').then(
            (value) => ({ tag: 'ok' as const, value }),
            (err: Error) => ({ tag: 'error' as const, value: err.message }),
          ),
        },
      })),
    ),
  };
}

/** No table or enum excluded. */
export const NO_FILTERS: Wasm.SchemaFilter = { externalTables: [], externalEnums: [] };

/**
 * Runs fn with a schema engine connected to target and loaded with the schema,
 * then frees the engine and closes what it opened.
 */
export async function withSchemaEngine<T>(
  options: { target: SchemaEngineTarget; schema: SchemaFiles; onLog?: (line: string) => void },
  fn: (engine: Wasm.SchemaEngine) => Promise<T>,
): Promise<T> {
  const [rt, { bindMigrationAwareSqlAdapterFactory }] = await Promise.all([
    loadRuntime(),
    import('@prisma/driver-adapter-utils'),
  ]);
  const { factory, dispose } = await createFactory(options.target);
  try {
    const adapter = bindMigrationAwareSqlAdapterFactory(
      factory as unknown as Parameters<typeof bindMigrationAwareSqlAdapterFactory>[0],
    );
    const engine = await rt.SchemaEngine.new(
      { datamodels: options.schema.files.map((f) => [f.path, f.content] as [string, string]) },
      (line: string) => options.onLog?.(line),
      adapter,
    );
    try {
      return await fn(engine);
    } finally {
      engine.free();
    }
  } finally {
    await dispose();
  }
}
