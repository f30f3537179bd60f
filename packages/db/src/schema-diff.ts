import path from 'node:path';
import { openDatabase } from './database';
import { loadPristineSnapshot } from './database-pglite';
import { NO_FILTERS, readSchemaFiles, type SchemaEngineTarget, withSchemaEngine } from './schema-engine';

/** What the engine prints for a migration without steps. */
export const EMPTY_MIGRATION_MARKER = '-- This is an empty migration.';

function normaliseScript(stdout: string | null): string {
  const script = (stdout ?? '').trim();
  return script === EMPTY_MIGRATION_MARKER ? '' : `${script}\n`;
}

/**
 * The SQL that would bring the database to schema.prisma (`prisma migrate diff
 * --from-config-datasource --to-schema`); '' when they match. `_prisma_migrations`
 * is not part of the comparison.
 */
export async function diffDatabaseToSchema(
  options: SchemaEngineTarget & { schemaPath: string },
): Promise<string> {
  const schema = await readSchemaFiles(options.schemaPath);
  return withSchemaEngine({ target: options, schema }, async (engine) => {
    const result = await engine.diff({
      from: { tag: 'schemaDatasource', ...schema, configDir: path.dirname(options.schemaPath) },
      to: { tag: 'schemaDatamodel', ...schema },
      script: true,
      exitCode: null,
      filters: NO_FILTERS,
    });
    return normaliseScript(result.stdout);
  });
}

/** The SQL that creates schema.prisma on an empty database (`migrate diff --from-empty`). */
export async function diffEmptyToSchema(options: { schemaPath: string }): Promise<string> {
  const schema = await readSchemaFiles(options.schemaPath);
  const db = await openDatabase({ snapshot: await loadPristineSnapshot() });
  return withSchemaEngine({ target: { db }, schema }, async (engine) => {
    const result = await engine.diff({
      from: { tag: 'empty' },
      to: { tag: 'schemaDatamodel', ...schema },
      script: true,
      exitCode: null,
      filters: NO_FILTERS,
    });
    return normaliseScript(result.stdout);
  }).finally(() => db.close());
}
