'use strict';
// The floor of a Node.js relay, for `npm run streams -- --gateway-script` and
// `npm run peers -- --variant-script`: a bare node:http server that forwards
// POST /api/v1/ai/chat/completions and /chat/stream to the upstream (one undici
// Pool, as the gateway's chat client) and relays the upstream's answer bytes
// unchanged (a stream: every piece as it arrives). No key check, limits,
// validation, parsing, re-framing, usage, metrics per request or logs: what is
// left is what any Node gateway pays per request, stream and chunk (sockets,
// HTTP parsing both ways, one read and one write per chunk). Serves /health
// and /metrics (event-loop delay) as the benches expect. Bench only.
const http = require('node:http');
const { Pool } = require('undici');
const promClient = require('prom-client');

const upstreamBase = /groq=([^,]+)/.exec(process.env.AI_PROVIDER_BASE_URLS ?? '')?.[1];
const apiKey = process.env.GROQ_API_KEY;
if (!upstreamBase || !apiKey)
  throw new Error('floor-relay: AI_PROVIDER_BASE_URLS (groq=...) and GROQ_API_KEY');
const base = new URL(upstreamBase);
const pool = new Pool(base.origin, { connections: null, keepAliveTimeout: 30_000 });
const upstreamPath = `${base.pathname.replace(/\/+$/, '')}/chat/completions`;
const messages = [{ role: 'user', content: 'Stream to the benchmark.' }];
const streamBody = JSON.stringify({ model: 'free-a', messages, stream: true });
const chatBody = JSON.stringify({ model: 'free-a', messages });
const upstreamHeaders = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
const registry = new promClient.Registry();
promClient.collectDefaultMetrics({ register: registry });

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.setHeader('content-type', 'application/json');
    res.end('{"status":"ok"}');
    return;
  }
  if (req.method === 'GET' && req.url === '/metrics') {
    registry.metrics().then((text) => {
      res.setHeader('content-type', registry.contentType);
      res.end(text);
      registry.resetMetrics();
    });
    return;
  }
  const stream = req.url === '/api/v1/ai/chat/stream';
  if (req.method !== 'POST' || (!stream && req.url !== '/api/v1/ai/chat/completions')) {
    res.statusCode = 404;
    res.end();
    return;
  }
  req.resume();
  req.on('end', () => {
    pool
      .request({
        method: 'POST',
        path: upstreamPath,
        headers: upstreamHeaders,
        body: stream ? streamBody : chatBody,
      })
      .then(async ({ statusCode, headers, body }) => {
        if (!stream) {
          const answer = Buffer.from(await body.arrayBuffer());
          res.writeHead(statusCode, { 'content-type': headers['content-type'] ?? 'application/json' });
          res.end(answer);
          return;
        }
        res.writeHead(statusCode, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        body.on('data', (piece) => {
          if (!res.write(piece)) {
            body.pause();
            res.once('drain', () => body.resume());
          }
        });
        body.on('end', () => res.end());
        body.on('error', () => res.destroy());
        res.on('close', () => body.destroy());
      })
      .catch(() => {
        if (!res.headersSent) res.statusCode = 502;
        res.end();
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen({ port: Number(process.env.PORT), host: process.env.HOST ?? '127.0.0.1', backlog: 4096 });
