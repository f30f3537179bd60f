// Console-style Prisma queries on the gateway's generated client: time per query (after warm-up).
const { Pool } = require('/work/main/node_modules/pg');
const { PrismaPg } = require('/work/main/node_modules/@prisma/adapter-pg');
const { PrismaClient } = require('/work/main/apps/gateway/dist/generated/prisma/client');
const { compileQueryCompilerFromFile } = require('/work/main/apps/gateway/dist/prisma-compiler');
(async () => {
  const pool = new Pool({ connectionString: 'postgresql://postgres@127.0.0.1:5432/s26probe', max: 4 });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: false }) });
  compileQueryCompilerFromFile(prisma);
  const shapes = [
    () => prisma.user.findMany({ where: { email: { contains: 'x' } }, take: 20, orderBy: { createdAt: 'desc' } }),
    () => prisma.apiKey.findMany({ where: { revokedAt: null }, include: { user: true }, take: 10 }),
    () => prisma.user.count({ where: { createdAt: { gt: new Date(0) } } }),
  ];
  const run = async (n) => { for (let i = 0; i < n; i++) await shapes[i % shapes.length](); };
  await run(3000);
  const c0 = process.cpuUsage(); const t0 = performance.now();
  await run(6000);
  const c = process.cpuUsage(c0);
  console.log(JSON.stringify({ flags: process.execArgv.join(' '), msPerQuery: +((performance.now() - t0) / 6000).toFixed(4), cpuMsPerQuery: +((c.user + c.system) / 1000 / 6000).toFixed(4) }));
  await prisma.$disconnect(); await pool.end();
})();
