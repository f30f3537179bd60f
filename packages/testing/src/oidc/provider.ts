import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** One client registered at the test provider (oidc-provider's client metadata). */
export type OidcTestClient = {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
};

/** A real OpenID provider (`oidc-provider` from npm) in a child process on 127.0.0.1. */
export type OidcTestProvider = {
  /** `http://127.0.0.1:<port>`: the issuer and its discovery base. */
  issuer: string;
  close(): Promise<void>;
};

const SCRIPT = path.join(__dirname, 'provider-process.mjs');

/**
 * Starts oidc-provider (ESM-only, so in its own Node process rather than
 * Jest's VM) with `clients` and, per login name, the claims its ID token
 * carries (`accounts`; any other login is an account whose e-mail is the
 * login). PKCE is required; login and consent are oidc-provider's own dev
 * interaction forms, which `signInAtProvider` fills in.
 */
export async function startOidcProvider(setup: {
  clients: OidcTestClient[];
  accounts?: Record<string, Record<string, unknown>>;
}): Promise<OidcTestProvider> {
  const child: ChildProcess = spawn(process.execPath, [SCRIPT], {
    env: { PATH: process.env.PATH ?? '', OIDC_TEST_SETUP: JSON.stringify(setup) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`oidc-provider did not start in 30 s: ${stderr}`)),
      30_000,
    );
    timer.unref();
    child.once('exit', (code) => reject(new Error(`oidc-provider exited with ${code}: ${stderr}`)));
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve((JSON.parse(line) as { issuer: string }).issuer);
      } catch {
        reject(new Error(`oidc-provider printed ${line}: ${stderr}`));
      }
    });
  });
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin?.end();
        setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
      }),
  };
}

/** A cookie jar for one browser's visit to the provider (names only; paths and expiry ignored). */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? '';
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

const decode = (s: string) => s.replaceAll('&amp;', '&').replaceAll('&#x2F;', '/').replaceAll('&#47;', '/');

/**
 * Plays the browser at the provider: opens `authorizationUrl`, follows its
 * redirects, posts its login form as `login` (any password) and its consent
 * form, until the provider redirects to `redirectUri`; resolves with that URL
 * (code and state, or error, in its query). Nothing is sent to the redirect URI.
 */
export async function signInAtProvider(
  authorizationUrl: string,
  opts: { login: string; redirectUri: string },
): Promise<URL> {
  const jar = new Jar();
  let url = new URL(authorizationUrl);
  let post: URLSearchParams | undefined;
  for (let step = 0; step < 20; step += 1) {
    const res = await fetch(url, {
      method: post ? 'POST' : 'GET',
      body: post,
      headers: { cookie: jar.header() },
      redirect: 'manual',
    });
    jar.take(res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url);
      post = undefined;
      if (url.href.startsWith(opts.redirectUri)) return url;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action || !prompt) {
      throw new Error(`provider answered ${res.status} at ${url.pathname}: ${html.slice(0, 500)}`);
    }
    url = new URL(decode(action), url);
    post = new URLSearchParams({ prompt });
    if (prompt === 'login') {
      post.set('login', opts.login);
      post.set('password', 'any');
    }
  }
  throw new Error('the provider did not send the browser back within 20 steps');
}
