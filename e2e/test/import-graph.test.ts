import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './support/compose';

// The shape a reader relies on: no file imports itself back through others,
// and a resource folder never reaches up into the app that mounts it.

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
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        const loop = [...stack.slice(stack.indexOf(next)), next];
        cycles.push(loop.map((f) => path.relative(ROOT, f)).join(' -> '));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
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
});
