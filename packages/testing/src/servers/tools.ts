import { existsSync } from 'node:fs';
import type { Need } from './need';

const NGINX_CANDIDATES = [
  '/usr/sbin/nginx',
  '/usr/local/sbin/nginx',
  '/usr/local/nginx/sbin/nginx',
  '/usr/bin/nginx',
];

/** A binary a test runs itself (with its own config): there is no shared one to use instead. */
function needBinary(kind: string, candidates: string[], howToInstall: string): Need<string> {
  const found = candidates.find((candidate) => existsSync(candidate));
  return {
    kind,
    missing: found ? undefined : `${howToInstall}; looked in ${candidates.join(', ')}`,
    async start() {
      if (!found) throw new Error(`${kind} is missing: ${howToInstall}`);
      return found;
    },
  };
}

/**
 * Debian's nginx (.ci/run installs it): start() gives the binary's path, the
 * test starts it with its own config; without it, describeWith(needNginx())
 * skips in one line.
 */
export function needNginx(): Need<string> {
  return needBinary('nginx', NGINX_CANDIDATES, 'apt-get install -y nginx-light (.ci/run does)');
}

/**
 * Chromium for the browser tests: CHROMIUM_PATH, else Debian's /usr/bin/chromium
 * (Playwright's own browser download cannot work on these machines); start()
 * gives the executable's path.
 */
export function needChromium(): Need<string> {
  const configured = process.env.CHROMIUM_PATH;
  return needBinary(
    'Chromium',
    configured ? [configured] : ['/usr/bin/chromium'],
    'apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH',
  );
}

/**
 * Debian's Prometheus (.ci/run installs it; promtool sits beside it): start()
 * gives the `prometheus` binary's path, the test runs it with the shipped
 * configuration (infra/prometheus).
 */
export function needPrometheus(): Need<string> {
  return needBinary(
    'Prometheus',
    ['/usr/bin/prometheus', '/usr/local/bin/prometheus'],
    'apt-get install -y prometheus (.ci/run does)',
  );
}
