import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

// Summarises gc-hook.cjs files: per process and kind of collection, how many,
// their pause at p50 / p90 / max and the sum, in ms.
// Usage: tsx src/profile/summarise-gc.ts FILE...

const KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak callbacks' };

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

function main(): void {
  const files = process.argv.slice(2);
  if (files.length === 0) throw new Error('usage: summarise-gc FILE...');
  console.log('| process | kind | count | p50 ms | p90 ms | max ms | sum ms |');
  console.log('|---|---|--:|--:|--:|--:|--:|');
  for (const file of files) {
    const pauses = JSON.parse(readFileSync(file, 'utf8')) as Array<[number, number, number]>;
    const byKind = new Map<number, number[]>();
    for (const [, kind, ms] of pauses) {
      const list = byKind.get(kind);
      if (list) list.push(ms);
      else byKind.set(kind, [ms]);
    }
    for (const [kind, list] of [...byKind].sort((a, b) => a[0] - b[0])) {
      const sorted = list.sort((a, b) => a - b);
      const sum = sorted.reduce((a, b) => a + b, 0);
      console.log(
        `| ${basename(file)} | ${KINDS[kind] ?? kind} | ${sorted.length} | ${quantile(sorted, 0.5)} | ${quantile(sorted, 0.9)} | ${sorted.at(-1)} | ${sum.toFixed(0)} |`,
      );
    }
  }
}

main();
