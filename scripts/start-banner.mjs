// Printed by `npm start` before turbo runs: what happens until both services answer.
// The services run from their TypeScript sources (tsx), so the only builds are the
// Prisma clients of both apps and the web console; turbo runs them in parallel and
// caches them, so later starts skip them.
const lines = [
  'npm start: preparing, then running both services from source (no TypeScript build)',
  '  1. prisma generate for payment and gateway, and vite build of the web console (in parallel; cached afterwards)',
  '  2. payment on http://localhost:3001 and gateway on http://localhost:3002 (embedded database unless DATABASE_URL is set)',
  '  config: config/local.env, then ./.env.local if present (./.env is for docker compose only)',
  '',
];
process.stdout.write(`${lines.join('\n')}\n`);
