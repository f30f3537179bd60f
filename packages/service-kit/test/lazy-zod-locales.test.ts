import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * In real Node processes, not Jest's module registry (which require.cache does not
 * reach): one loads zod as it is, one with the stand-in first. The built module
 * (dist/, made by the build the test task depends on) is what the services load.
 */
const shim = path.resolve(__dirname, '../dist/lazy-zod-locales.js');

type Seen = { names: string[]; loaded: string[]; de: string; en: string; installed?: boolean };

function inNode(withShim: boolean): Seen {
  const script = `
    const installed = ${withShim} ? (require(${JSON.stringify(shim)}), true) : undefined;
    const { z } = require('zod');
    const loaded = () => Object.keys(require.cache).filter((k) => k.includes('/zod/v4/locales/')).map((k) => k.split('/').pop()).sort();
    const before = loaded();
    const names = Object.keys(z.locales).sort();
    const message = (locale) => {
      z.config(locale);
      const r = z.string().safeParse(1);
      return r.error.issues[0].message;
    };
    const de = message(z.locales.de());
    const en = message(z.locales.en());
    process.stdout.write(JSON.stringify({ names, loaded: before, de, en, installed }));
  `;
  const out = execFileSync(process.execPath, ['-e', script], { cwd: __dirname, encoding: 'utf8' });
  return JSON.parse(out) as Seen;
}

describe("zod's message locales, loaded when asked for", () => {
  const real = inNode(false);
  const lazy = inNode(true);

  it('zod loads with English only, where it loads every locale without the stand-in', () => {
    expect(real.loaded.length).toBeGreaterThan(50);
    // index.cjs is the stand-in in the cache; of the locale files only English was loaded.
    expect(lazy.loaded).toEqual(['en.cjs', 'index.cjs']);
    expect(lazy.installed).toBe(true);
  });

  it('offers the same locale names as zod’s own index', () => {
    expect(lazy.names).toEqual(real.names);
    expect(lazy.names).toEqual(expect.arrayContaining(['de', 'en', 'frCA', 'ptBR', 'zhCN', 'zhTW']));
  });

  it('a locale asked for still works, with the same messages', () => {
    expect(lazy.de).toBe(real.de);
    expect(lazy.en).toBe(real.en);
    expect(lazy.de).not.toBe(lazy.en);
  });
});
