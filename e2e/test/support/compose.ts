import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** Repository root. */
export const ROOT = path.join(__dirname, '..', '..', '..');

/** One `KEY=value` line of a dotenv file and whether a comment documents it. */
export type DotenvEntry = { value: string; documented: boolean; line: number };

/**
 * Parses a dotenv file the way compose does for plain `KEY=value` lines. A key
 * counts as documented when it sits in a block that starts with a comment, so
 * several related keys may share one explanation.
 */
export function parseDotenv(text: string): Map<string, DotenvEntry> {
  const entries = new Map<string, DotenvEntry>();
  let inDocumentedBlock = false;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') {
      inDocumentedBlock = false;
      return;
    }
    if (line.startsWith('#')) {
      inDocumentedBlock = true;
      return;
    }
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) throw new Error(`line ${index + 1} is not KEY=value: ${raw}`);
    const [, key, value] = match as unknown as [string, string, string];
    entries.set(key, {
      value: value.replace(/^(['"])(.*)\1$/, '$2'),
      documented: inDocumentedBlock,
      line: index + 1,
    });
  });
  return entries;
}

const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** Names a compose value substitutes from the environment (`${X}`, `${X:-d}`, `$X`; `$$` is a literal `$`). */
export function referencedNames(value: string): string[] {
  const names: string[] = [];
  for (const match of value.matchAll(REFERENCE)) {
    const name = match[1] ?? match[4];
    if (name) names.push(name);
  }
  return names;
}

/**
 * Compose's interpolation: `${X}`, `${X:-default}`, `${X-default}`,
 * `${X:?error}`, `${X?error}` and `$$`. Throws where compose would refuse.
 */
export function interpolate(value: string, vars: Map<string, string>): string {
  return value.replace(REFERENCE, (whole, braced?: string, op?: string, arg?: string, bare?: string) => {
    if (whole === '$$') return '$';
    const name = (braced ?? bare) as string;
    const current = vars.get(name);
    const unsetOrEmpty = current === undefined || current === '';
    switch (op) {
      case ':-':
        return unsetOrEmpty ? (arg ?? '') : current;
      case '-':
        return current === undefined ? (arg ?? '') : current;
      case ':?':
        if (unsetOrEmpty) throw new Error(`${name}: ${arg}`);
        return current;
      case '?':
        if (current === undefined) throw new Error(`${name}: ${arg}`);
        return current;
      default:
        return current ?? '';
    }
  });
}

/** The parts of a compose service this test reads. */
export type ComposeService = {
  image?: string;
  command?: string[] | string;
  user?: string;
  build?: { context?: string; dockerfile?: string; target?: string; args?: Record<string, string> };
  profiles?: string[];
  volumes?: string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  env_file?: string | Array<string | { path: string }>;
  ports?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string };
};

export type ComposeFile = { services: Record<string, ComposeService> };

export function readCompose(): { text: string; file: ComposeFile } {
  const text = fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
  return { text, file: parse(text) as ComposeFile };
}

export function readEnvExample(): Map<string, DotenvEntry> {
  return parseDotenv(fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8'));
}

/** A service's environment as written in the compose file (before interpolation). */
export function rawEnvironment(service: ComposeService): Map<string, string> {
  const env = new Map<string, string>();
  const { environment } = service;
  if (Array.isArray(environment)) {
    for (const item of environment) {
      const eq = item.indexOf('=');
      if (eq > 0) env.set(item.slice(0, eq), item.slice(eq + 1));
    }
  } else if (environment) {
    for (const [key, value] of Object.entries(environment)) env.set(key, value === null ? '' : String(value));
  }
  return env;
}

/**
 * What the container would see, with `.env` stood in for by `.env.example`:
 * env_file entries first, then `environment` (which wins), both interpolated.
 */
export function containerEnvironment(
  service: ComposeService,
  dotenv: Map<string, DotenvEntry>,
): Map<string, string> {
  const vars = new Map([...dotenv].map(([key, entry]) => [key, entry.value]));
  const env = new Map<string, string>();
  const envFiles = service.env_file === undefined ? [] : [service.env_file].flat();
  for (const file of envFiles) {
    const name = typeof file === 'string' ? file : file.path;
    const source =
      path.basename(name) === '.env' ? dotenv : parseDotenv(fs.readFileSync(path.join(ROOT, name), 'utf8'));
    for (const [key, entry] of source) env.set(key, entry.value);
  }
  for (const [key, value] of rawEnvironment(service)) env.set(key, interpolate(value, vars));
  return env;
}
