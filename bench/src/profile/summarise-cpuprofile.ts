import { readFileSync } from 'node:fs';
import { groupOf } from './group-of';

// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by
// file or package, largest first, over the whole profile or its last
// `--last <s>` seconds. Usage: tsx src/profile/summarise-cpuprofile.ts FILE [--last 10] [--top 40]

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

function main(): void {
  const args = process.argv.slice(2);
  const file = args[0];
  if (!file) throw new Error('usage: summarise-cpuprofile FILE [--last s] [--top n]');
  const lastSec = Number(args[args.indexOf('--last') + 1] ?? 0) || 0;
  const top = Number(args[args.indexOf('--top') + 1] ?? 0) || 40;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totalUs = profile.endTime - profile.startTime;
  const fromUs = lastSec > 0 ? totalUs - lastSec * 1e6 : 0;
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const frameName = (n: Node) =>
    `${n.callFrame.functionName || '(anonymous)'} ${groupOf(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  const callersOf = args.includes('--callers') ? args[args.indexOf('--callers') + 1] : undefined;
  const chains = new Map<string, number>();
  const selfByFn = new Map<string, number>();
  const selfByGroup = new Map<string, number>();
  let t = 0;
  let counted = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (t < fromUs) continue;
    const node = byId.get(profile.samples[i] ?? -1);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') {
      selfByGroup.set(functionName, (selfByGroup.get(functionName) ?? 0) + dt);
      continue;
    }
    counted += dt;
    const fn = `${functionName || '(anonymous)'} ${groupOf(url)}:${lineNumber + 1}`;
    if (callersOf && functionName === callersOf) {
      const chain: string[] = [];
      for (let p = parentOf.get(node.id); p !== undefined && chain.length < 12; p = parentOf.get(p)) {
        const parent = byId.get(p);
        if (parent) chain.push(frameName(parent));
      }
      const key = chain.join(' < ');
      chains.set(key, (chains.get(key) ?? 0) + dt);
    }
    selfByFn.set(fn, (selfByFn.get(fn) ?? 0) + dt);
    const group = functionName === '(garbage collector)' ? '(gc)' : groupOf(url);
    selfByGroup.set(group, (selfByGroup.get(group) ?? 0) + dt);
  }
  const print = (title: string, map: Map<string, number>) => {
    console.log(`\n${title} (busy ${Math.round(counted / 1000)} ms)`);
    for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(
        `${((v / counted) * 100).toFixed(1).padStart(5)}%  ${Math.round(v / 1000)
          .toString()
          .padStart(6)} ms  ${k}`,
      );
    }
  };
  print('self time by file/package', selfByGroup);
  print('self time by function', selfByFn);
  if (callersOf) print(`callers of ${callersOf}`, chains);
}

main();
