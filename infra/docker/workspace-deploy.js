// Prepares what a service image needs from the npm-workspaces monorepo, so the
// Dockerfiles stay short and follow new workspace dependencies on their own.
//
//   manifests <out>               root package.json, lockfile and every workspace's
//                                 package.json (a full `npm ci` needs all of them)
//   prod-manifests <name> <out>   the same, narrowed to <name> and the workspaces it
//                                 depends on at runtime, devDependencies dropped
//   bundle <name> <out>           dist/ (and prisma/, data/ where present) of those workspaces
//
// Why prod-manifests: `npm ci --omit=dev -w <name>` still installs the other
// workspaces' dependencies, workspace devDependencies (npm/cli#6670) and optional
// peers such as the prisma CLI. Installing from manifests that only name the
// runtime closure, with the full lockfile pinning every version, does not.
const fs = require('node:fs');
const path = require('node:path');

const root = process.cwd();
const readJson = (file) => JSON.parse(fs.readFileSync(path.join(root, file), 'utf8'));
const rootManifest = readJson('package.json');

/** Every workspace as { name, dir, manifest }. */
function listWorkspaces() {
  const dirs = (rootManifest.workspaces ?? []).flatMap((pattern) => fs.globSync(pattern, { cwd: root }));
  return dirs
    .filter((dir) => fs.existsSync(path.join(root, dir, 'package.json')))
    .map((dir) => {
      const manifest = readJson(path.join(dir, 'package.json'));
      return { name: manifest.name, dir, manifest };
    });
}

/** <name> plus the workspaces reachable through `dependencies` (not dev) from it. */
function runtimeClosure(name) {
  const byName = new Map(listWorkspaces().map((ws) => [ws.name, ws]));
  const start = byName.get(name);
  if (!start) throw new Error(`no workspace named ${name}`);
  const seen = new Map();
  const visit = (ws) => {
    if (seen.has(ws.name)) return;
    seen.set(ws.name, ws);
    for (const dep of Object.keys(ws.manifest.dependencies ?? {})) {
      const next = byName.get(dep);
      if (next) visit(next);
    }
  };
  visit(start);
  return [...seen.values()];
}

function writeJson(out, file, value) {
  fs.mkdirSync(path.join(out, path.dirname(file)), { recursive: true });
  fs.writeFileSync(path.join(out, file), `${JSON.stringify(value, null, 2)}\n`);
}

function copy(out, relative) {
  const from = path.join(root, relative);
  if (!fs.existsSync(from)) return false;
  fs.cpSync(from, path.join(out, relative), { recursive: true });
  return true;
}

function collectManifests(out) {
  copy(out, 'package.json');
  copy(out, 'package-lock.json');
  for (const ws of listWorkspaces()) copy(out, path.join(ws.dir, 'package.json'));
}

function collectProdManifests(name, out) {
  const closure = runtimeClosure(name);
  const { devDependencies: _rootDev, scripts: _rootScripts, ...rootRest } = rootManifest;
  writeJson(out, 'package.json', { ...rootRest, workspaces: closure.map((ws) => ws.dir) });
  copy(out, 'package-lock.json');
  for (const ws of closure) {
    const { devDependencies: _dev, scripts: _scripts, ...rest } = ws.manifest;
    writeJson(out, path.join(ws.dir, 'package.json'), rest);
  }
}

function collectBundle(name, out) {
  for (const ws of runtimeClosure(name)) {
    if (!copy(out, path.join(ws.dir, 'dist'))) throw new Error(`${ws.name} has no dist/: build it first`);
    copy(out, path.join(ws.dir, 'prisma'));
    copy(out, path.join(ws.dir, 'data'));
  }
}

const [command, ...args] = process.argv.slice(2);
const commands = {
  manifests: () => collectManifests(args[0]),
  'prod-manifests': () => collectProdManifests(args[0], args[1]),
  bundle: () => collectBundle(args[0], args[1]),
};
const run = commands[command];
const needed = command === 'manifests' ? 1 : 2;
if (!run || args.length < needed || args.some((a) => !a)) {
  process.stderr.write(
    'usage: workspace-deploy.js manifests <out> | prod-manifests <name> <out> | bundle <name> <out>\n',
  );
  process.exit(2);
}
run();
