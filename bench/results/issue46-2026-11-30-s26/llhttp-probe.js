// Does undici's llhttp (WASM) tier-up cost resident memory? Client and server in one process.
const http = require('node:http');
const fs = require('node:fs');
const { Pool } = require('/work/main/node_modules/undici');
const chunk = 'data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hello world"}}]}\n\n';
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let i = 0;
  const next = () => { if (i++ < 20) { res.write(chunk); setImmediate(next); } else res.end('data: [DONE]\n\n'); };
  next();
});
const rssKb = () => +/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1];
const anonKb = () => +/^Pss_Anon:\s+(\d+)/m.exec(fs.readFileSync("/proc/self/smaps_rollup", "utf8"))[1] - Math.round(process.memoryUsage().heapTotal / 1024);
server.listen(0, '127.0.0.1', async () => {
  const pool = new Pool(`http://127.0.0.1:${server.address().port}`, { connections: 50 });
  const one = async () => { const r = await pool.request({ path: '/', method: 'GET' }); for await (const _ of r.body) {} };
  // warm a little (Liftoff only)
  for (let i = 0; i < 50; i++) await one();
  global.gc?.();
  const before = { rss: rssKb(), anon: anonKb() };
  const cpu0 = process.cpuUsage(); const t0 = performance.now();
  const N = +process.env.N || 20000;
  let done = 0;
  await Promise.all(Array.from({ length: 50 }, async () => { while (done < N) { done++; await one(); } }));
  const cpu = process.cpuUsage(cpu0); const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 500));
  global.gc?.();
  const after = { rss: rssKb(), anon: anonKb() };
  console.log(JSON.stringify({ flags: process.execArgv.join(' '), before, after, grewKb: after.anon - before.anon, cpuMsPerReq: +((cpu.user + cpu.system) / 1000 / N).toFixed(4), reqPerSec: Math.round(N / ms * 1000) }));
  process.exit(0);
});
