import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './compose';

/** A throwaway CA and a server certificate it signed, as files and as the CA's PEM. */
export type TestCertificates = {
  /** PEM of the CA: trust it in the client (`ca`). */
  ca: Buffer;
  certFile: string;
  keyFile: string;
  remove(): void;
};

/**
 * Makes a CA and a certificate for the given host names with Debian's openssl,
 * through the script operators use for a trial (infra/proxy/make-dev-cert.sh):
 * EC P-256 keys, the leaf valid for those names only. Nothing is trusted
 * system-wide; only clients given `ca` accept it.
 */
export function createTestCertificates(hosts: string[]): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-tls-'));
  execFileSync('sh', [path.join(ROOT, 'infra', 'proxy', 'make-dev-cert.sh'), dir, ...hosts], {
    env: { PATH: process.env.PATH ?? '', DEV_CERT_DAYS: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return {
    ca: fs.readFileSync(path.join(dir, 'ca.crt')),
    certFile: path.join(dir, 'tls.crt'),
    keyFile: path.join(dir, 'tls.key'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
