import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './support/compose';

// Every test that needs a server gets it from @platform/testing's helpers
// (needPostgres, needRedis, needNginx, needChromium, docs/development.md
// "Tests"): the TEST_* server when given, a private one where the binary
// exists, else the block is skipped in one line. This holds new test files to
// that: no test reads TEST_* itself, throws because a server is missing, or
// starts a server outside a block that would have skipped without it.

/** Test files and their support code: every .ts under a workspace's test/, and src/**\/*.test.ts. */
function testFiles(): string[] {
  const workspaces = ['apps', 'packages'].flatMap((group) =>
    fs.readdirSync(path.join(ROOT, group)).map((name) => path.join(ROOT, group, name)),
  );
  const files: string[] = [];
  for (const dir of [...workspaces, path.join(ROOT, 'e2e')]) {
    for (const [sub, keep] of [
      ['test', (f: string) => f.endsWith('.ts')],
      ['src', (f: string) => f.endsWith('.test.ts')],
    ] as const) {
      const base = path.join(dir, sub);
      if (!fs.existsSync(base)) continue;
      for (const f of fs.readdirSync(base, { recursive: true, encoding: 'utf8' })) {
        const parts = f.split(path.sep);
        if (parts.includes('node_modules') || parts.includes('generated') || !keep(f)) continue;
        files.push(path.join(base, f));
      }
    }
  }
  return files;
}

const TEST_SERVER_VARS = new Set(['TEST_DATABASE_URL', 'TEST_REDIS_URL']);
/** A thrown message that blames the machine for a missing server. */
const NEEDS_SERVER =
  /\bneeds?\b.*\b(redis|postgres|nginx|chromium|initdb|server|TEST_)|TEST_(DATABASE|REDIS)_URL/i;
/** Functions that start a server or a binary a test needs... */
const STARTERS = new Set([
  'startPrivateRedis',
  'startPrivatePostgres',
  'startPrivateStorage',
  'startSharedServers',
  'launchChromium',
  'startServiceProxy',
  'startFleet',
]);
/** ...and what decides, before that, to skip the block in one line when the machine lacks it. */
const GATES = new Set([
  'describeWith',
  'needsMet',
  'describeWithSharedServers',
  'describeSpawnedGateway',
  'describeUnless',
]);
/** Support code that starts servers for test files which gate themselves, and a CLI run by .ci/run. */
const STARTS_FOR_GATED_CALLERS = new Set(['e2e/test/support/fleet.ts', 'e2e/test/support/image-check.ts']);

const isProcessEnv = (node: ts.Node) => node.getText() === 'process.env';

/** What a file does against the rule, one line each as `file:line: what`. */
function serverNeedViolations(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const called = new Set<string>();
  const at = (node: ts.Node, what: string) =>
    found.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAccessExpression(node) &&
      isProcessEnv(node.expression) &&
      TEST_SERVER_VARS.has(node.name.text)
    )
      at(node, `reads ${node.name.text}: get the server from needPostgres()/needRedis()`);
    if (
      ts.isElementAccessExpression(node) &&
      isProcessEnv(node.expression) &&
      ts.isStringLiteralLike(node.argumentExpression) &&
      TEST_SERVER_VARS.has(node.argumentExpression.text)
    )
      at(node, `reads ${node.argumentExpression.text}: get the server from needPostgres()/needRedis()`);
    if (ts.isVariableDeclaration(node) && node.initializer && isProcessEnv(node.initializer)) {
      const names = ts.isObjectBindingPattern(node.name)
        ? node.name.elements.map((e) => e.name.getText())
        : [];
      for (const name of names.filter((n) => TEST_SERVER_VARS.has(n)))
        at(node, `reads ${name}: get the server from needPostgres()/needRedis()`);
    }
    if (ts.isThrowStatement(node) && node.expression && NEEDS_SERVER.test(node.expression.getText()))
      at(node, 'throws for a missing server: skip with describeWith(needX()) instead');
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (name) called.add(name);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  const starts = [...called].filter((n) => STARTERS.has(n));
  if (starts.length > 0 && ![...called].some((n) => GATES.has(n)) && !STARTS_FOR_GATED_CALLERS.has(file))
    found.push(`${file}: starts ${starts.join(', ')} without describeWith(needX()) deciding to skip first`);
  return found;
}

it('no test file reads TEST_*, throws for a missing server, or starts one outside a skipping block', () => {
  const files = testFiles();
  expect(files.length).toBeGreaterThan(100);
  const violations = files.flatMap((f) =>
    serverNeedViolations(path.relative(ROOT, f).split(path.sep).join('/'), fs.readFileSync(f, 'utf8')),
  );
  expect(violations).toEqual([]);
});

describe('the rule', () => {
  const check = (source: string) => serverNeedViolations('x.int.test.ts', source);

  it('catches a test that throws when TEST_REDIS_URL is unset (the three suites of issue 37)', () => {
    const source = `
      let kv;
      beforeAll(() => {
        const store = createTestKv();
        if (store.kind !== 'redis') throw new Error('this test needs Redis (TEST_REDIS_URL)');
        kv = store;
      });
      it('works', () => {});`;
    expect(check(source)).toEqual([
      'x.int.test.ts:5: throws for a missing server: skip with describeWith(needX()) instead',
    ]);
  });

  it('catches a direct read of TEST_DATABASE_URL or TEST_REDIS_URL, however spelt', () => {
    const source = [
      'const a = process.env.TEST_DATABASE_URL;',
      "const b = process.env['TEST_REDIS_URL'];",
      'const { TEST_REDIS_URL } = process.env;',
    ].join('\n');
    expect(check(source)).toHaveLength(3);
  });

  it('catches a server started with nothing deciding to skip first', () => {
    const source = 'beforeAll(async () => { server = await startPrivateRedis(); });';
    expect(check(source)).toEqual([
      'x.int.test.ts: starts startPrivateRedis without describeWith(needX()) deciding to skip first',
    ]);
  });

  it('lets the helpers through', () => {
    const source = `
      const redis = needRedis();
      describeWith(redis)('on Redis', () => {
        const server = perTestFile(redis.start);
        // TEST_REDIS_URL in a comment, and 'TEST_REDIS_URL' in a string, are fine
        it('works', async () => { expect(server.url).toContain('redis'); });
      });`;
    expect(check(source)).toEqual([]);
  });
});
