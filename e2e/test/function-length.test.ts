import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './support/compose';

// No function in apps/*/src runs over 80 lines unless a comment says why it
// must (CONVENTIONS.md: files small and named for what they do). The comment
// is one that says `over 80 lines`, before the function or atop its body.

const MAX_LINES = 80;
const WHY = /over 80 lines/i;

/**
 * Functions another change owns, each with the reason: once it lands, its
 * entry goes. Issue 45 splits the stream relay into named parts.
 */
const OWNED_ELSEWHERE: Record<string, string> = {
  'apps/gateway/src/ai/streaming/relay.ts relayChatStream': 'split by issue 45',
};

type LongFunction = { where: string; name: string; lines: number };

function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

/** The comments before `node` and the nodes that hold it (its `const`, its property), and atop its body. */
function commentsOf(text: string, node: ts.FunctionLikeDeclaration): string {
  const holders: ts.Node[] = [node];
  for (let p = node.parent; p && !ts.isSourceFile(p) && !ts.isBlock(p); p = p.parent) holders.push(p);
  const before = holders.flatMap((n) => ts.getLeadingCommentRanges(text, n.getFullStart()) ?? []);
  const body = node.body;
  const first = body && ts.isBlock(body) ? body.statements[0] : undefined;
  const atop = first ? (ts.getLeadingCommentRanges(text, first.getFullStart()) ?? []) : [];
  return [...before, ...atop].map((r) => text.slice(r.pos, r.end)).join('\n');
}

/** Functions of a source text longer than MAX_LINES without a comment saying why. */
export function longFunctions(fileName: string, text: string): LongFunction[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const start = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_LINES && !WHY.test(commentsOf(text, fn)))
        found.push({ where: fileName, name: nameOf(fn), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFilesOf(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .filter((f) => !f.split(path.sep).includes('generated'))
    .map((f) => path.join(dir, f));
}

describe('function length', () => {
  it('no function in apps/*/src is over 80 lines without a comment saying why', () => {
    const long = fs
      .readdirSync(path.join(ROOT, 'apps'))
      .map((app) => path.join(ROOT, 'apps', app, 'src'))
      .filter((dir) => fs.existsSync(dir))
      .flatMap(sourceFilesOf)
      .flatMap((file) => longFunctions(path.relative(ROOT, file), fs.readFileSync(file, 'utf8')))
      .filter((f) => !OWNED_ELSEWHERE[`${f.where} ${f.name}`])
      .map((f) => `${f.where} ${f.name}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it('finds a long function, and lets one through whose comment says why', () => {
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `export function plain() {\n${body}\n}`,
      `/** Over 80 lines on purpose: one table, read top to bottom. */\nexport const told = () => {\n${body}\n};`,
      `export function short() {\n  return 1;\n}`,
    ].join('\n');
    expect(longFunctions('x.ts', text)).toEqual([{ where: 'x.ts', name: 'plain', lines: MAX_LINES + 2 }]);
  });
});
