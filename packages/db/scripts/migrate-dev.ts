// Offline `prisma migrate` for development: run from an app folder, e.g.
//   npx tsx ../../packages/db/scripts/migrate-dev.ts create add_notes
// or from anywhere: npm run migrate:dev -w @platform/db -- create add_notes --app apps/payment
import { runMigrateCli } from '../src/migrate-cli';

runMigrateCli(process.argv.slice(2), {
  env: process.env,
  // npm runs workspace scripts inside the workspace; INIT_CWD is where it was invoked.
  cwd: process.env.INIT_CWD ?? process.cwd(),
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
