import { readFileSync } from 'node:fs';
import { groupOf } from './group-of';

// Summarises a sampling heap profile (bench/src/profile/alloc-hook.cjs): bytes
// allocated by function (self) and by file or package, largest first.
// Usage: tsx src/profile/summarise-heapprofile.ts FILE [--top 40] [--per N]
// (--per: divide bytes by N, e.g. the requests served, to print bytes per request).

type HeapNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
};
type HeapProfile = { head: HeapNode; samples: Array<{ size: number; nodeId: number }> };

function main(): void {
  const args = process.argv.slice(2);
  const file = args[0];
  if (!file) throw new Error('usage: summarise-heapprofile FILE [--top n] [--per n]');
  const top = Number(args[args.indexOf('--top') + 1] ?? 0) || 40;
  const per = args.includes('--per') ? Number(args[args.indexOf('--per') + 1]) : 0;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as HeapProfile;
  const byFunction = new Map<string, number>();
  const byGroup = new Map<string, number>();
  // Each allocation charged to the nearest caller in our own code (apps/ or packages/): who asked for it.
  const byOwnCaller = new Map<string, number>();
  const bytesOf = new Map<number, number>();
  for (const s of profile.samples) bytesOf.set(s.nodeId, (bytesOf.get(s.nodeId) ?? 0) + s.size);
  let total = 0;
  const walk = (n: HeapNode, own: string) => {
    const f0 = n.callFrame;
    const here = /(apps|packages)\/[^/]+\/(dist|src)\//.test(f0.url)
      ? `${f0.functionName || '(anonymous)'} ${groupOf(f0.url)}:${f0.lineNumber + 1}`
      : own;
    const bytes = bytesOf.get(n.id) ?? 0;
    if (bytes > 0) {
      byOwnCaller.set(here, (byOwnCaller.get(here) ?? 0) + bytes);
      const f = n.callFrame;
      const name = `${f.functionName || '(anonymous)'} ${groupOf(f.url)}:${f.lineNumber + 1}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + bytes);
      byGroup.set(groupOf(f.url), (byGroup.get(groupOf(f.url)) ?? 0) + bytes);
      total += bytes;
    }
    for (const c of n.children) walk(c, here);
  };
  walk(profile.head, '(no own caller)');
  const unit = per > 0 ? 'bytes/req' : 'MB';
  const show = (b: number) => (per > 0 ? (b / per).toFixed(0) : (b / 1e6).toFixed(1));
  for (const [title, table] of [
    ['by file/package', byGroup],
    ['by function', byFunction],
    ['by nearest own caller', byOwnCaller],
  ] as const) {
    console.log(`\nallocated ${title} (total ${show(total)} ${unit})`);
    for (const [name, bytes] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(`${((100 * bytes) / total).toFixed(1).padStart(5)}%  ${show(bytes).padStart(8)}  ${name}`);
  }
}

main();
