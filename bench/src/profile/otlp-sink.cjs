// An OTLP/HTTP sink for tracing benchmarks: the least a collector on another host costs
// the gateway. It accepts each export (POST /v1/traces), drains the body without parsing
// it (counting requests and bytes only) and answers 200 with the OTLP empty success
// body (an empty ExportTraceServiceResponse: no bytes in protobuf, `{}` in JSON).
// Usage: nice -n 19 node bench/src/profile/otlp-sink.cjs [port=4319]
// (niced, it yields the shared cores to the gateway under load). Every 10 s it prints
// the exports and bytes received so far. GET /idle?ms=N answers once no export has
// arrived for N ms (at most 30 s): a bench can wait there so that no export spills into
// the next target's window. The integration tests use their own receiver, which decodes
// the spans (startOtlpReceiver in @platform/testing).
const http = require('node:http');

let received = 0;
let bytes = 0;
let lastExportAt = 0;
const EMPTY = Buffer.alloc(0);
const EMPTY_JSON = Buffer.from('{}');

function waitIdle(ms, res, deadline) {
  const quietFor = Date.now() - lastExportAt;
  if (quietFor >= ms || Date.now() >= deadline) {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`${received} ${bytes}\n`);
    return;
  }
  setTimeout(() => waitIdle(ms, res, deadline), Math.max(10, ms - quietFor));
}

http
  .createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/idle')) {
      const ms = Math.min(30_000, Number(new URL(req.url, 'http://sink').searchParams.get('ms')) || 500);
      waitIdle(ms, res, Date.now() + 30_000);
      return;
    }
    lastExportAt = Date.now();
    req.on('data', (chunk) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      received += 1;
      lastExportAt = Date.now();
      const json = req.headers['content-type']?.includes('json') === true;
      res
        .writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
        .end(json ? EMPTY_JSON : EMPTY);
    });
  })
  .listen(Number(process.argv[2] ?? 4319), '127.0.0.1');
setInterval(
  () => console.log(`${new Date().toISOString()} exports ${received} bytes ${bytes}`),
  10_000,
).unref();
