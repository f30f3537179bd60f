import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './support/compose';

// After `npm ci` nothing is generated yet: Prisma clients are made by the apps'
// `generate` tasks. Every root script must therefore run the generate of each
// app whose code it reads before the task that reads it, whatever the first
// command on a fresh clone is. turbo's dry run shows the task graph it would run.

type DryTask = { taskId: string; package: string; task: string; command: string; dependencies: string[] };

const rootScripts = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<
  string,
  string
>;

function dryRun(task: string): DryTask[] {
  const out = execFileSync(path.join(ROOT, 'node_modules', '.bin', 'turbo'), ['run', task, '--dry=json'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
  return (JSON.parse(out) as { tasks: DryTask[] }).tasks;
}

/** Workspace name -> names of the workspaces it depends on (dependencies and devDependencies). */
function workspaceGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const pattern of ['apps', 'packages']) {
    for (const dir of fs.readdirSync(path.join(ROOT, pattern))) {
      graph.set(...manifestEdges(path.join(ROOT, pattern, dir)));
    }
  }
  for (const dir of ['bench', 'e2e']) graph.set(...manifestEdges(path.join(ROOT, dir)));
  return graph;
}

function manifestEdges(dir: string): [string, string[]] {
  const m = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const deps = Object.keys({ ...m.dependencies, ...m.devDependencies }).filter((d) =>
    d.startsWith('@platform/'),
  );
  return [m.name, deps];
}

/** Workspaces with a Prisma `generate` script: their src/generated does not exist after `npm ci`. */
const GENERATORS = ['@platform/gateway', '@platform/payment'];

/** The workspace itself and everything it reaches through workspace dependencies. */
function reach(graph: Map<string, string[]>, start: string): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const next of graph.get(name) ?? []) visit(next);
  };
  visit(start);
  return seen;
}

/** Every task id `taskId` waits for, directly or not. */
function upstreamOf(tasks: DryTask[], taskId: string): Set<string> {
  const byId = new Map(tasks.map((t) => [t.taskId, t]));
  const seen = new Set<string>();
  const visit = (id: string) => {
    for (const dep of byId.get(id)?.dependencies ?? []) {
      if (!seen.has(dep)) {
        seen.add(dep);
        visit(dep);
      }
    }
  };
  visit(taskId);
  return seen;
}

const graph = workspaceGraph();

describe('fresh clone: any root script may be the first command after npm ci', () => {
  it.each(['typecheck', 'build', 'test', 'dev', 'start'])(
    '`npm run %s` runs the Prisma generate of every app a task reads before that task',
    (script) => {
      expect(rootScripts[script]).toContain(`turbo run ${script}`);
      const all = dryRun(script);
      const tasks = all.filter((t) => t.task === script && t.command !== '<NONEXISTENT>');
      expect(tasks.length).toBeGreaterThan(0);
      const missing = tasks.flatMap((t) => {
        const upstream = upstreamOf(all, t.taskId);
        return GENERATORS.filter((app) => reach(graph, t.package).has(app))
          .filter((app) => !upstream.has(`${app}#generate`))
          .map((app) => `${t.taskId} does not wait for ${app}#generate`);
      });
      expect(missing).toEqual([]);
    },
  );

  // The client no longer reads the apps: its service tests live in e2e, since the gateway uses the client.
  it('bench and e2e read the apps through a workspace dependency, so the rule above covers them', () => {
    for (const name of ['@platform/bench', '@platform/e2e']) {
      expect([...reach(graph, name)]).toEqual(expect.arrayContaining(GENERATORS));
    }
  });

  it('`npm run lint` reads no generated code: biome checks files, not types', () => {
    expect(rootScripts.lint).toContain('turbo run lint');
    const commands = dryRun('lint')
      .map((t) => t.command)
      .filter((c) => c !== '<NONEXISTENT>');
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.filter((c) => !c.startsWith('biome '))).toEqual([]);
  });
});

/** A Node below 24 on this machine, if any (CI machines start on the distribution's Node 20). */
function olderNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!fs.existsSync(candidate)) continue;
    const major = Number(
      execFileSync(candidate, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }),
    );
    if (major < 24) return candidate;
  }
  return undefined;
}

/** `npm install --dry-run` in a scratch project with the root's .npmrc and engines, under the node in `binDir`. */
function dryInstall(binDir: string): { status: number | null; output: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engines-'));
  const root = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  fs.copyFileSync(path.join(ROOT, '.npmrc'), path.join(dir, '.npmrc'));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'engines-check', version: '1.0.0', private: true, engines: root.engines }),
  );
  const result = spawnSync('npm', ['install', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('first run', () => {
  const older = olderNode();
  (older ? it : it.skip)(
    `npm ci under Node below 24 (${older}) stops with EBADENGINE naming the required version`,
    () => {
      const { status, output } = dryInstall(path.dirname(older ?? ''));
      expect(status).not.toBe(0);
      expect(output).toContain('EBADENGINE');
      expect(output).toContain('"node":">=24 <25"');
    },
  );

  it('under Node 24 the same install goes ahead', () => {
    const { status } = dryInstall(path.dirname(process.execPath));
    expect(status).toBe(0);
  });

  it('root scripts keep turbo from printing its telemetry notice', () => {
    const turboScripts = Object.values(rootScripts).filter((s) => s.includes('turbo run'));
    expect(turboScripts.length).toBeGreaterThan(0);
    for (const script of turboScripts) expect(script).toMatch(/^TURBO_TELEMETRY_DISABLED=1 turbo run /);
  });

  it.each(['gateway', 'payment'])(
    "%s dev/start read ./.env.local only when it exists, and never compose's ./.env",
    (app) => {
      const { scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'apps', app, 'package.json'), 'utf8'));
      for (const name of ['dev', 'start']) {
        expect(scripts[name]).not.toContain('--env-file-if-exists');
        expect(scripts[name]).toContain('--env-file=../../config/local.env');
        expect(scripts[name]).toContain('$(test -f ../../.env.local && echo --env-file=../../.env.local)');
        // compose's .env names hosts of the compose network (mailpit, postgres): loaded by
        // `npm start` it sent sign-in mail to a host that does not exist.
        expect(scripts[name]).not.toMatch(/\.\.\/\.env(?!\.local)/);
      }
    },
  );
});
