export { openDatabase } from './database';
export { loadPristineSnapshot, pgliteVersion } from './database-pglite';
export type {
  Database,
  DbLogger,
  DbSession,
  OpenDatabaseOptions,
  PgliteDatabase,
  PostgresDatabase,
  Row,
  SqlRunner,
} from './database-types';
export { createKeyValueStore, type KeyValueStoreOptions } from './kv';
export { createMemoryStore, type MemoryStoreOptions } from './kv-memory';
export { createRedisStore, type RedisKeyValueStore, type RedisStoreOptions } from './kv-redis';
export { deletePrefixedKeys } from './kv-redis-admin';
export type { KeyValueStore } from './kv-types';
export {
  type ApplyMigrationsOptions,
  applyMigrations,
  MigrationError,
  type MigrationRecord,
  PRISMA_ADVISORY_LOCK_KEY,
  PRISMA_MIGRATIONS_TABLE_DDL,
} from './migrate';
export { type MigrationFile, readMigrationFiles, sha256Hex } from './migration-files';
export { diffDatabaseToSchema, diffEmptyToSchema, EMPTY_MIGRATION_MARKER } from './schema-diff';
export { patchPgCharType, type SchemaEngineTarget } from './schema-engine';
export {
  createMigration,
  diagnoseMigrations,
  type PrismaPaths,
  resolvePrismaPaths,
} from './schema-migrations';
export { type OpenServiceStorageOptions, openServiceStorage, type ServiceStorage } from './service-storage';
