import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gatewayRouteTable, type RouteEntry, routeTable } from '@platform/gateway/testing';
import express from 'express';
import ts from 'typescript';
import { ROOT } from './support/compose';

// The shape a reader relies on: no file imports itself back through others,
// no folder does either (a folder is one room: if a imports b, nothing in b
// reaches back into a), and a resource folder never reaches up into the app
// that mounts it.

/** Every .ts file under dir (tests and generated code excluded). */
function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .filter((f) => !f.split(path.sep).includes('generated'))
    .map((f) => path.join(dir, f));
}

/** Relative imports of a file (type-only ones included), resolved to files. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => {
      // A dynamic import() names the compiled file (`./server.js`, see apps/*/src/main.ts).
      const base = path.resolve(path.dirname(file), spec.replace(/\.js$/, ''));
      const candidate = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f));
      if (!candidate) throw new Error(`${path.relative(ROOT, file)}: cannot resolve ${spec}`);
      return candidate;
    });
}

/** One cycle per strongly connected group of files, as `a -> b -> a`; none means acyclic. */
function findCycles(files: string[]): string[] {
  return cyclesOf(new Map(files.map((f) => [f, importsOf(f)]))).map((loop) =>
    loop.map((f) => path.relative(ROOT, f)).join(' -> '),
  );
}

/** Each loop found by a depth-first walk, as the list of its nodes (first = last). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

/**
 * The folder a file belongs to, relative to the workspace's src: its
 * directory (`ai/providers`), or the file itself for one at the top
 * (`deps.ts`, `env.ts`), which is a room of its own.
 */
function folderOf(root: string, file: string): string {
  const dir = path.relative(root, path.dirname(file));
  return dir === '' ? path.basename(file) : dir.split(path.sep).join('/');
}

const topOf = (folder: string): string => folder.split('/')[0] as string;
const within = (folder: string, parent: string): boolean => folder.startsWith(`${parent}/`);

/**
 * Loops between folders, each as `a -> b -> a` followed by one import that
 * makes every step (`a/x.ts imports b/y.ts`); none means the folders form a
 * hierarchy. Two levels: the folders of src (`auth`, `ai`, `users`), and the
 * rooms inside one of them (`ai/providers`, `ai/config`), which must not loop
 * with each other either. A room may lean on the folder around it (the relay
 * in `ai/streaming` uses `ai/run-targets.ts`), so parent and child are not
 * compared.
 */
function findFolderLoops(root: string): string[] {
  const levels: ((from: string, to: string) => [string, string] | null)[] = [
    (from, to) => (topOf(from) === topOf(to) ? null : [topOf(from), topOf(to)]),
    (from, to) => (topOf(from) !== topOf(to) || within(from, to) || within(to, from) ? null : [from, to]),
  ];
  const imports = sourceFiles(root).flatMap((file) =>
    importsOf(file).map((imported) => ({ file, imported })),
  );
  return levels.flatMap((level) => {
    const edges = new Map<string, Map<string, string>>();
    for (const { file, imported } of imports) {
      const edge = level(folderOf(root, file), folderOf(root, imported));
      if (!edge || edge[0] === edge[1]) continue;
      const out = edges.get(edge[0]) ?? new Map<string, string>();
      if (!out.has(edge[1]))
        out.set(edge[1], `${path.relative(root, file)} imports ${path.relative(root, imported)}`);
      edges.set(edge[0], out);
    }
    const graph = new Map([...edges].map(([from, out]) => [from, [...out.keys()]]));
    return cyclesOf(graph).map((loop) => {
      const steps = loop.slice(1).map((to, i) => edges.get(loop[i] as string)?.get(to));
      return [loop.join(' -> '), ...steps.map((step) => `  ${step}`)].join('\n');
    });
  });
}

const WORKSPACES = [
  'apps/gateway/src',
  'apps/payment/src',
  ...fs.readdirSync(path.join(ROOT, 'packages')).map((p) => `packages/${p}/src`),
].filter((dir) => fs.existsSync(path.join(ROOT, dir)));

describe('import graph', () => {
  it.each(WORKSPACES)('%s has no import cycle', (dir) => {
    expect(findCycles(sourceFiles(path.join(ROOT, dir)))).toEqual([]);
  });

  it.each(WORKSPACES)('%s has no loop between folders', (dir) => {
    expect(findFolderLoops(path.join(ROOT, dir))).toEqual([]);
  });

  it.each(['apps/gateway/src', 'apps/payment/src'])(
    'no resource folder of %s imports app.ts or main.ts',
    (dir) => {
      const root = path.join(ROOT, dir);
      const top = new Set([path.join(root, 'app.ts'), path.join(root, 'main.ts')]);
      const upward = sourceFiles(root)
        .filter((f) => path.dirname(f) !== root)
        .flatMap((f) =>
          importsOf(f)
            .filter((i) => top.has(i))
            .map((i) => `${path.relative(root, f)} -> ${path.relative(root, i)}`),
        );
      expect(upward).toEqual([]);
    },
  );

  it('bench, e2e and the packages reach an app only through its @platform/<app>/testing export', () => {
    const dirs = [
      'bench/src',
      'e2e/test',
      ...fs
        .readdirSync(path.join(ROOT, 'packages'))
        .flatMap((p) => [`packages/${p}/src`, `packages/${p}/test`]),
    ];
    const reaching = dirs
      .map((dir) => path.join(ROOT, dir))
      .filter((dir) => fs.existsSync(dir))
      .flatMap((dir) =>
        fs
          .readdirSync(dir, { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.ts'))
          .map((f) => path.join(dir, f)),
      )
      .flatMap((file) =>
        ts
          .preProcessFile(fs.readFileSync(file, 'utf8'), true, true)
          .importedFiles.map((i) => i.fileName)
          .filter((spec) => spec.startsWith('.'))
          .filter((spec) =>
            path.relative(ROOT, path.resolve(path.dirname(file), spec)).startsWith(`apps${path.sep}`),
          )
          .map((spec) => `${path.relative(ROOT, file)} imports ${spec}`),
      );
    expect(reaching).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-'));
    fs.writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = b;\n");
    fs.writeFileSync(
      path.join(dir, 'b.ts'),
      "import type { a } from './a';\nexport const b = 1 as unknown as typeof a;\n",
    );
    expect(findCycles(sourceFiles(dir))).toHaveLength(1);
  });

  it('finds a loop between folders when there is one, though no file imports itself back', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-'));
    for (const sub of ['auth', 'users', 'users/admin', 'ai/config', 'ai/providers'])
      fs.mkdirSync(path.join(dir, sub), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'auth/session.ts'),
      "import { find } from '../users/repo';\nexport const s = find;\n",
    );
    fs.writeFileSync(path.join(dir, 'auth/types.ts'), 'export type Auth = { id: string };\n');
    fs.writeFileSync(path.join(dir, 'users/repo.ts'), 'export const find = 1;\n');
    fs.writeFileSync(
      path.join(dir, 'users/routes.ts'),
      "import type { Auth } from '../auth/types';\nexport type R = Auth;\n",
    );
    // A sub-folder is a folder of its own: importing its parent is fine while the parent does not import it.
    fs.writeFileSync(
      path.join(dir, 'users/admin/list.ts'),
      "import { find } from '../repo';\nexport const l = find;\n",
    );
    // Two rooms of one folder, each importing the other.
    fs.writeFileSync(
      path.join(dir, 'ai/config/lanes.ts'),
      "import { p } from '../providers/catalog';\nexport const l = p;\n",
    );
    fs.writeFileSync(path.join(dir, 'ai/config/limits.ts'), 'export const max = 1;\n');
    fs.writeFileSync(path.join(dir, 'ai/providers/catalog.ts'), 'export const p = 1;\n');
    fs.writeFileSync(
      path.join(dir, 'ai/providers/registry.ts'),
      "import { max } from '../config/limits';\nexport const r = max;\n",
    );
    expect(findCycles(sourceFiles(dir))).toEqual([]);
    expect(findFolderLoops(dir)).toEqual([
      'auth -> users -> auth\n  auth/session.ts imports users/repo.ts\n  users/routes.ts imports auth/types.ts',
      'ai/config -> ai/providers -> ai/config\n  ai/config/lanes.ts imports ai/providers/catalog.ts\n  ai/providers/registry.ts imports ai/config/limits.ts',
    ]);
  });
});

/**
 * Gateway folders that must not import auth/: the AI core, the money
 * (budgets) and the compatibility APIs learn who calls from admission/,
 * the one step that composes the key check, the rate, the key's rules and
 * the budget reservation.
 */
const NOT_AUTH = ['ai', 'budgets', 'openai-compat'];

/** Imports from a NOT_AUTH folder into auth/, as `from imports to`. */
function authImports(root: string): string[] {
  return sourceFiles(root)
    .filter((f) => NOT_AUTH.includes(topOf(folderOf(root, f))))
    .flatMap((f) =>
      importsOf(f)
        .filter((i) => topOf(folderOf(root, i)) === 'auth')
        .map((i) => `${path.relative(root, f)} imports ${path.relative(root, i)}`),
    );
}

/** A path the AI routes own: the native AI API, the vendor-compatible /v1, the MCP endpoint. */
const isAiPath = (p: string) => p.startsWith('/api/v1/ai/') || p.startsWith('/v1/') || p === '/mcp';

/** The AI routes of a route table that no admission guard runs before, as `METHOD path`. */
function unadmitted(table: readonly RouteEntry[]): string[] {
  return table.filter((r) => isAiPath(r.path) && !r.admission).map((r) => `${r.method} ${r.path}`);
}

/** Every AI route the gateway must have, and how it is admitted (spend: key, rate, then a reservation). */
const AI_ROUTES: Record<string, 'spend' | 'read'> = {
  'POST /api/v1/ai/chat/completions': 'spend',
  'POST /api/v1/ai/chat/stream': 'spend',
  'POST /api/v1/ai/image': 'spend',
  'POST /api/v1/ai/tts': 'spend',
  'POST /api/v1/ai/music': 'spend',
  'POST /api/v1/ai/soundfx': 'spend',
  'POST /v1/chat/completions': 'spend',
  'POST /v1/embeddings': 'spend',
  'POST /v1/responses': 'spend',
  'GET /v1/responses/:id': 'read',
  'DELETE /v1/responses/:id': 'read',
  'POST /v1/messages': 'spend',
  'POST /v1/messages/count_tokens': 'spend',
  'GET /v1/models': 'read',
  'GET /v1/models/*id': 'read',
  'POST /mcp': 'read',
  'GET /mcp': 'read',
  'DELETE /mcp': 'read',
};

describe('admission', () => {
  it('budgets, ai and openai-compat import nothing from auth', () => {
    expect(authImports(path.join(ROOT, 'apps/gateway/src'))).toEqual([]);
  });

  it('finds an import into auth when there is one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-'));
    for (const sub of ['auth', 'budgets', 'admission']) fs.mkdirSync(path.join(dir, sub));
    fs.writeFileSync(path.join(dir, 'auth/types.ts'), 'export type Auth = { id: string };\n');
    fs.writeFileSync(
      path.join(dir, 'admission/caller.ts'),
      "import type { Auth } from '../auth/types';\nexport type C = Auth;\n",
    );
    fs.writeFileSync(
      path.join(dir, 'budgets/budgets.ts'),
      "import type { Auth } from '../auth/types';\nexport type B = Auth;\n",
    );
    expect(authImports(dir)).toEqual([`budgets${path.sep}budgets.ts imports auth${path.sep}types.ts`]);
  });

  it('every AI route of the gateway is mounted behind admission, each as listed', async () => {
    const table = await gatewayRouteTable();
    expect(unadmitted(table)).toEqual([]);
    const mounted = Object.fromEntries(
      table.filter((r) => isAiPath(r.path)).map((r) => [`${r.method} ${r.path}`, r.admission]),
    );
    expect(mounted).toEqual(AI_ROUTES);
  });

  it('finds an AI route mounted without admission when there is one', () => {
    const app = express();
    const router = express.Router();
    router.post('/v1/unguarded', (_req, res) => {
      res.end();
    });
    router.get('/api/v1/users/me', (_req, res) => {
      res.end();
    });
    app.use(router);
    expect(unadmitted(routeTable(app))).toEqual(['POST /v1/unguarded']);
  });
});
