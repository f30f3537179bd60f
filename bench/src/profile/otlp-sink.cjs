// An OTLP/HTTP sink for tracing benchmarks: reads every export body and answers 200
// (an empty ExportTraceServiceResponse). Usage: node bench/src/profile/otlp-sink.cjs [port=4319]
const http = require('node:http');

let received = 0;
let bytes = 0;
http
  .createServer((req, res) => {
    req.on('data', (chunk) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      received += 1;
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf' }).end();
    });
  })
  .listen(Number(process.argv[2] ?? 4319), '127.0.0.1');
setInterval(
  () => console.log(`${new Date().toISOString()} exports ${received} bytes ${bytes}`),
  10_000,
).unref();
