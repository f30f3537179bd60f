import { readFileSync } from 'node:fs';
import { groupOf } from './group-of';

// Compares two V8 .cpuprofiles of the same code under the same load (e.g. one
// traced, one not, from one `ab` run with both sides profiled): self time by
// package or file, each divided by the self time of packages the change does
// not touch (a "control" set), so that the two processes' different shares of
// the machine cancel out. Also: the share of samples whose nearest package or
// app frame (first non-node:, non-native frame up the stack) matches --mark.
// Usage: tsx src/profile/compare-cpuprofiles.ts A B (each one file or several, comma-separated) [--skip 12] [--top 30]
//   [--control express,router,body-parser,zod,helmet,raw-body] [--mark opentelemetry,service-kit/dist/otlp]

type Node = {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** Several profiles (comma-separated, e.g. every worker of one side) summed. */
function summarise(files: string, skipSec: number, marks: string[]) {
  const all = files.split(',').map((file) => summariseOne(file, skipSec, marks));
  const self = new Map<string, number>();
  for (const s of all) for (const [g, us] of s.self) self.set(g, (self.get(g) ?? 0) + us);
  return {
    self,
    busy: all.reduce((n, s) => n + s.busy, 0),
    marked: all.reduce((n, s) => n + s.marked, 0),
  };
}

function summariseOne(file: string, skipSec: number, marks: string[]) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const nearest = new Map<number, string>();
  const nearestOf = (id: number): string => {
    const cached = nearest.get(id);
    if (cached !== undefined) return cached;
    let cur: number | undefined = id;
    let found = '(native/vm)';
    while (cur !== undefined) {
      const n = byId.get(cur);
      const url = n?.callFrame.url ?? '';
      if (url && !url.startsWith('node:')) {
        found = groupOf(url);
        break;
      }
      cur = parentOf.get(cur);
    }
    nearest.set(id, found);
    return found;
  };
  const self = new Map<string, number>();
  let t = 0;
  let busy = 0;
  let marked = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (t < skipSec * 1e6) continue;
    const node = byId.get(profile.samples[i] ?? -1);
    if (!node) continue;
    const fn = node.callFrame.functionName;
    if (fn === '(idle)' || fn === '(program)') continue;
    const group = fn === '(garbage collector)' ? '(gc)' : groupOf(node.callFrame.url);
    self.set(group, (self.get(group) ?? 0) + dt);
    busy += dt;
    const near = nearestOf(node.id);
    if (marks.some((m) => near.includes(m))) marked += dt;
  }
  return { self, busy, marked };
}

function main(): void {
  const [a, b] = process.argv.slice(2, 4);
  if (!a || !b)
    throw new Error('usage: compare-cpuprofiles A B [--skip s] [--top n] [--control list] [--mark list]');
  const skip = Number(arg('skip', '12'));
  const top = Number(arg('top', '30'));
  const control = arg('control', 'express,router,body-parser,zod,helmet,raw-body').split(',');
  const marks = arg(
    'mark',
    '@opentelemetry,service-kit/dist/otlp,service-kit/dist/lean,service-kit/dist/tracing,service-kit/dist/encoding,service-kit/dist/random,observability/spans',
  ).split(',');
  const sa = summarise(a, skip, marks);
  const sb = summarise(b, skip, marks);
  const unit = (s: ReturnType<typeof summarise>) => {
    let c = 0;
    for (const [g, us] of s.self) if (control.includes(g)) c += us;
    return c;
  };
  const ua = unit(sa);
  const ub = unit(sb);
  console.log(
    `A ${a}\n  busy ${(sa.busy / 1e6).toFixed(1)} s, control ${(ua / 1e6).toFixed(2)} s, busy/control ${(sa.busy / ua).toFixed(2)}, nearest-frame marked ${((100 * sa.marked) / sa.busy).toFixed(1)} %`,
  );
  console.log(
    `B ${b}\n  busy ${(sb.busy / 1e6).toFixed(1)} s, control ${(ub / 1e6).toFixed(2)} s, busy/control ${(sb.busy / ub).toFixed(2)}, nearest-frame marked ${((100 * sb.marked) / sb.busy).toFixed(1)} %`,
  );
  console.log('group: A and B in control units, B - A');
  const groups = new Set([...sa.self.keys(), ...sb.self.keys()]);
  const rows = [...groups].map((g) => {
    const va = (sa.self.get(g) ?? 0) / ua;
    const vb = (sb.self.get(g) ?? 0) / ub;
    return { g, va, vb, d: vb - va };
  });
  rows.sort((x, y) => Math.abs(y.d) - Math.abs(x.d));
  for (const r of rows.slice(0, top))
    console.log(
      `${r.g.padEnd(60)} ${r.va.toFixed(3).padStart(7)} ${r.vb.toFixed(3).padStart(7)} ${(r.d >= 0 ? '+' : '') + r.d.toFixed(3)}`,
    );
}

main();
