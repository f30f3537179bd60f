import { readdirSync } from 'node:fs';
import path from 'node:path';
import { cacheStandIn } from './module-stand-in';

/**
 * zod's index loads every one of its ~60 message locales (`z.locales.de`,
 * `z.locales.ja`, ...) to offer them under `z.locales`, though a service that
 * never calls `z.config(z.locales.xx())` uses only English, which zod loads on
 * its own (`../locales/en.cjs`). Loading zod without the others holds ~1 MB
 * less heap and several MB less resident memory per process (issue 46;
 * bench/results/2026-11-29-issue46-memory-s17.md).
 *
 * This puts a stand-in for zod's locales index into Node's module cache before
 * zod loads: the same export names, each a getter that loads its locale from
 * zod's own file on first use, so `z.locales.de()` still works. Names are made
 * from the files as zod's index names them (`fr-CA.cjs` -> `frCA`); the test
 * compares them with the real index's. Call it before anything loads zod (the
 * services' main.ts imports this module first); if zod is already loaded, or
 * its locales are not where this zod version keeps them, it does nothing.
 */
export function installLazyZodLocales(): boolean {
  let index: string;
  try {
    index = require.resolve('zod/v4/locales');
  } catch {
    return false;
  }
  if (require.cache[index] || path.basename(index) !== 'index.cjs') return false;
  const dir = path.dirname(index);
  const exports: Record<string, unknown> = {};
  // zod takes the index through __importStar, which hands an ES-module-shaped object back as it is
  // (its getters untouched) and would otherwise copy every property, loading every locale.
  Object.defineProperty(exports, '__esModule', { value: true });
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.cjs') || file === 'index.cjs') continue;
    const name = camelCase(file.slice(0, -'.cjs'.length));
    const full = path.join(dir, file);
    Object.defineProperty(exports, name, {
      enumerable: true,
      // As zod's index reads each file (its __importDefault): a locale file's module is the function itself.
      get: () => {
        const mod = require(full) as { __esModule?: boolean; default?: unknown };
        return mod?.__esModule ? mod.default : mod;
      },
    });
  }
  cacheStandIn(index, exports);
  return true;
}

/** `fr-CA` -> `frCA`, `zh-TW` -> `zhTW` (a file name of zod's, never client text). */
function camelCase(name: string): string {
  let out = '';
  for (let i = 0; i < name.length; i += 1) {
    const c = name[i] as string;
    if (c === '-' && i + 1 < name.length) {
      i += 1;
      out += (name[i] as string).toUpperCase();
    } else out += c;
  }
  return out;
}

installLazyZodLocales();
