#!/usr/bin/env node
// The gateway's test pyramid, counted by test case: every `it(...)`/`test(...)` call
// (`.each`, `.concurrent`, `.skip`, `.only`, `.failing` included; `.todo` not) in unit
// test files (`apps/gateway/src/**/*.test.ts`: no Postgres, Redis or network) against
// integration test files (`apps/gateway/test/**/*.int.test.ts`). A table-driven case
// (`it.each(rows)(...)`) counts once, as it is written once. Prints both counts and the
// ratio; with `--min <ratio>` exits 1 below it. See docs/development.md#tests.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..');
const GATEWAY = path.join(ROOT, 'apps', 'gateway');

/** Files under `dir` whose name ends with `suffix`. */
function filesOf(dir, suffix) {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(suffix) && !f.split(path.sep).includes('node_modules'))
    .map((f) => path.join(dir, f));
}

const CASE_ROOTS = new Set(['it', 'test']);
const MODIFIERS = new Set(['each', 'concurrent', 'skip', 'only', 'failing']);

/** Whether `callee` names a test case: it, test, it.skip, it.each(rows), it.concurrent.each(rows)... */
function isCaseCallee(callee) {
  if (ts.isIdentifier(callee)) return CASE_ROOTS.has(callee.text);
  if (ts.isPropertyAccessExpression(callee))
    return MODIFIERS.has(callee.name.text) && isCaseCallee(callee.expression);
  // `it.each(rows)` is itself a call; the case is the call of what it returns.
  if (ts.isCallExpression(callee)) {
    const inner = callee.expression;
    return (
      ts.isPropertyAccessExpression(inner) && inner.name.text === 'each' && isCaseCallee(inner.expression)
    );
  }
  return false;
}

/** The test cases written in a source text. */
export function countCases(text, fileName = 'x.test.ts') {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  let n = 0;
  const visit = (node) => {
    if (ts.isCallExpression(node) && isCaseCallee(node.expression)) {
      const callee = node.expression;
      // `it.each(rows)` alone is not a case, the call of its result is.
      const eachTable =
        ts.isPropertyAccessExpression(callee) &&
        callee.name.text === 'each' &&
        node.parent &&
        ts.isCallExpression(node.parent) &&
        node.parent.expression === node;
      if (!eachTable) n += 1;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return n;
}

/** Cases per tier of the gateway. */
export function gatewayPyramid() {
  const count = (files) => files.reduce((sum, f) => sum + countCases(fs.readFileSync(f, 'utf8'), f), 0);
  const unitFiles = filesOf(path.join(GATEWAY, 'src'), '.test.ts').filter((f) => !f.includes('/generated/'));
  const intFiles = filesOf(path.join(GATEWAY, 'test'), '.int.test.ts');
  const unit = count(unitFiles);
  const integration = count(intFiles);
  return { unit, integration, unitFiles: unitFiles.length, integrationFiles: intFiles.length };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { unit, integration, unitFiles, integrationFiles } = gatewayPyramid();
  const ratio = integration === 0 ? Number.POSITIVE_INFINITY : unit / integration;
  console.log(`gateway unit cases:        ${unit} (${unitFiles} files, src/**/*.test.ts)`);
  console.log(`gateway integration cases: ${integration} (${integrationFiles} files, test/**/*.int.test.ts)`);
  console.log(`unit : integration = ${ratio.toFixed(2)} : 1`);
  const minAt = process.argv.indexOf('--min');
  if (minAt !== -1 && ratio < Number(process.argv[minAt + 1])) {
    console.error(`below the floor of ${process.argv[minAt + 1]} : 1`);
    process.exit(1);
  }
}
