const Redis = require('ioredis');
const { Client } = require('pg');
(async () => {
  const r = new Redis('redis://127.0.0.1:6379/9');
  const pg = new Client({ connectionString: 'postgresql://postgres@127.0.0.1:5432/platform_test' }); await pg.connect();
  const key = 'bench-eb0e9943:usage:ledger';
  await r.del('diag:s'); 
  const N = 300;
  const t = async (name, fn) => {
    for (let i = 0; i < 20; i++) await fn(i);
    const c0 = process.cpuUsage(); const w0 = performance.now();
    for (let i = 0; i < N; i++) await fn(i);
    const c = process.cpuUsage(c0); const w = performance.now() - w0;
    console.log(name, 'cpu per batch %s ms (user %s sys %s), wall %s ms', ((c.user + c.system) / 1000 / N).toFixed(3), (c.user/1000/N).toFixed(3), (c.system/1000/N).toFixed(3), (w / N).toFixed(3));
  };
  let entries;
  await t('xrange 128', async (i) => { entries = await r.xrange(key, '-', '+', 'COUNT', 128); });
  let joined;
  await t('join', async () => { const parts = []; for (const [, f] of entries) { const v = f[1]; parts.push(v.slice(1, -1)); } joined = `[${parts.join(',')}]`; });
  console.log('joined bytes', joined.length);
  await t('pg jsonb select', async () => { await pg.query('SELECT jsonb_array_length($1::jsonb)', [joined]); });
  await t('pg select 1', async () => { await pg.query('SELECT 1'); });
  const ids = entries.map(([id]) => id);
  await t('multi xack xdel (none exist)', async () => { await r.multi().xack('diag:s', 'g', ...ids).xdel('diag:s', ...ids).exec(); });
  await t('ping', async () => { await r.ping(); });
  r.disconnect(); await pg.end();
})();
