import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { needNginx } from '@platform/testing';
import { ROOT } from './compose';

const PROXY_DIR = path.join(ROOT, 'infra', 'proxy');
/** A running nginx with the repository's proxy config. */
export type NginxProxy = {
  /** Plain-HTTP port on 127.0.0.1 (health paths, redirects). */
  port: number;
  /** HTTPS port on 127.0.0.1. */
  tlsPort: number;
  /** Everything nginx wrote to its access log so far. */
  accessLog(): string;
  close(): Promise<void>;
};

/** The host names the services answer under behind the proxy. */
export const PAYMENT_HOST = 'payment.localhost';
export const GATEWAY_HOST = 'gateway.localhost';

type StartNginxOptions = {
  /** Plain-HTTP listen port on 127.0.0.1. */
  port: number;
  /** HTTPS listen port on 127.0.0.1; redirects from plain HTTP point here. */
  tlsPort: number;
  /** PEM files of the server certificate (chain) and its key. */
  certFile: string;
  keyFile: string;
  /** host:port of each service, or of each of its instances. */
  paymentUpstream: string | string[];
  gatewayUpstream: string | string[];
  paymentHost: string;
  gatewayHost: string;
};

/**
 * Substitutes `${NAME}` the way the nginx image's envsubst step does: only the
 * given names, so nginx's own `$variables` and `${capture}` references stay.
 * A list value repeats each line that uses it once per entry, as a deploy
 * script lists several instances (`server a:1;` `server b:2;`).
 */
function renderTemplate(template: string, values: Record<string, string | string[]>): string {
  const lines = template.split('\n').flatMap((line) => {
    const list = Object.entries(values).find(([name, v]) => Array.isArray(v) && line.includes(`\${${name}}`));
    if (!list) return [line];
    const [name, entries] = list as [string, string[]];
    return entries.map((entry) => line.replaceAll(`\${${name}}`, entry));
  });
  const rendered = lines.join('\n').replace(/\$\{([A-Z][A-Z0-9_]*)\}/g, (whole, name: string) => {
    const value = values[name];
    return typeof value === 'string' ? value : whole;
  });
  const left = rendered.match(/\$\{[A-Z][A-Z0-9_]*\}/g);
  if (left) throw new Error(`template variables without a value: ${[...new Set(left)].join(', ')}`);
  return rendered;
}

/**
 * Lays out a prefix folder shaped like /etc/nginx in the nginx image
 * (nginx.conf, conf.d/default.conf from the template, snippets/), with pid,
 * logs and temp files inside it, so nginx runs unprivileged and leaves nothing behind.
 */
function writePrefix(dir: string, opts: StartNginxOptions): void {
  for (const sub of ['conf.d', 'snippets', 'temp']) fs.mkdirSync(path.join(dir, sub));
  const template = fs.readFileSync(path.join(PROXY_DIR, 'templates', 'default.conf.template'), 'utf8');
  fs.writeFileSync(
    path.join(dir, 'conf.d', 'default.conf'),
    renderTemplate(template, {
      PROXY_LISTEN: `127.0.0.1:${opts.port}`,
      PROXY_TLS_LISTEN: `127.0.0.1:${opts.tlsPort}`,
      PROXY_HTTPS_PORT: String(opts.tlsPort),
      TLS_CERTIFICATE: opts.certFile,
      TLS_CERTIFICATE_KEY: opts.keyFile,
      PROXY_ACCESS_LOG: path.join(dir, 'access.log'),
      PAYMENT_SERVER_NAME: opts.paymentHost,
      GATEWAY_SERVER_NAME: opts.gatewayHost,
      PAYMENT_UPSTREAM: opts.paymentUpstream,
      GATEWAY_UPSTREAM: opts.gatewayUpstream,
    }),
  );
  for (const file of fs.readdirSync(path.join(PROXY_DIR, 'snippets'))) {
    fs.copyFileSync(path.join(PROXY_DIR, 'snippets', file), path.join(dir, 'snippets', file));
  }
  const temp = (name: string) => path.join(dir, 'temp', name);
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      'worker_processes 1;',
      `pid ${path.join(dir, 'nginx.pid')};`,
      `error_log ${path.join(dir, 'error.log')} warn;`,
      'events { worker_connections 256; }',
      'http {',
      `    client_body_temp_path ${temp('client_body')};`,
      `    proxy_temp_path ${temp('proxy')};`,
      `    fastcgi_temp_path ${temp('fastcgi')};`,
      `    uwsgi_temp_path ${temp('uwsgi')};`,
      `    scgi_temp_path ${temp('scgi')};`,
      `    include ${path.join(dir, 'conf.d', '*.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
}

function readIfExists(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

async function waitUntilServing(port: number, child: ChildProcess, errorLog: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${errorLog()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/proxy-health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nginx did not answer on ${port} within 15 s:\n${errorLog()}`);
}

/** Starts nginx in the foreground with the proxy config pointed at the given upstreams. */
async function startNginx(opts: StartNginxOptions): Promise<NginxProxy> {
  const binary = await needNginx().start();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-nginx-'));
  // Workers drop to `nobody` when the master runs as root; they must reach the temp folders.
  fs.chmodSync(dir, 0o755);
  writePrefix(dir, opts);
  const errorLogFile = path.join(dir, 'error.log');
  const errorLog = () => readIfExists(errorLogFile);
  const conf = path.join(dir, 'nginx.conf');

  const check = spawn(binary, ['-t', '-q', '-p', dir, '-e', errorLogFile, '-c', conf]);
  const checked = await new Promise<number | null>((resolve) => check.on('exit', resolve));
  if (checked !== 0) throw new Error(`nginx -t rejected the proxy config:\n${errorLog()}`);

  const child = spawn(binary, ['-p', dir, '-e', errorLogFile, '-c', conf, '-g', 'daemon off;'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitUntilServing(opts.port, child, errorLog);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }

  return {
    port: opts.port,
    tlsPort: opts.tlsPort,
    accessLog: () => readIfExists(path.join(dir, 'access.log')),
    async close() {
      if (child.exitCode === null) {
        // SIGQUIT: graceful stop, workers finish open requests first.
        child.kill('SIGQUIT');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** nginx for both services under PAYMENT_HOST and GATEWAY_HOST, serving `certs` on tlsPort. */
export function startServiceProxy(opts: {
  port: number;
  tlsPort: number;
  certs: { certFile: string; keyFile: string };
  paymentUpstream: string | string[];
  gatewayUpstream: string | string[];
}): Promise<NginxProxy> {
  return startNginx({
    port: opts.port,
    tlsPort: opts.tlsPort,
    certFile: opts.certs.certFile,
    keyFile: opts.certs.keyFile,
    paymentHost: PAYMENT_HOST,
    gatewayHost: GATEWAY_HOST,
    paymentUpstream: opts.paymentUpstream,
    gatewayUpstream: opts.gatewayUpstream,
  });
}
