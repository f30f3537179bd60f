import { readFileSync } from 'node:fs';

// Summarises V8 heap snapshots (memory-hook.cjs with MEMORY_HOOK_SNAPSHOT=1, or
// v8.writeHeapSnapshot): self size and count by kind (node type and constructor),
// and the bytes of plain objects, arrays, contexts and strings by the retainer path
// up to the nearest object with a constructor of its own (`ServerResponse .locals`,
// `closure:attempt .(context)`): who holds them.
// Usage: tsx src/profile/summarise-heapsnapshot.ts AFTER [BEFORE] [--top 40] [--depth 4]
// With BEFORE (e.g. the same worker idle, then with N streams open): AFTER minus
// BEFORE, per added ServerResponse (bytes per open request).
// Large snapshots need a larger heap: NODE_OPTIONS=--max-old-space-size=6000.

type Snapshot = {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[]];
      edge_fields: string[];
      edge_types: [string[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
};

/** Bytes and count per key. */
type Tally = Map<string, { bytes: number; count: number }>;

const PLAIN_OBJECTS = new Set([
  'Object',
  'Array',
  'system / Context',
  'system / PropertyArray',
  '',
  '(object elements)',
  '(object properties)',
]);
const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string', 'number']);

function add(t: Tally, key: string, bytes: number): void {
  const entry = t.get(key) ?? { bytes: 0, count: 0 };
  entry.bytes += bytes;
  entry.count += 1;
  t.set(key, entry);
}

function summarise(file: string, depth: number): { kinds: Tally; holders: Tally } {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const meta = snap.snapshot.meta;
  const nfl = meta.node_fields.length;
  const efl = meta.edge_fields.length;
  const [nodeTypes] = meta.node_types;
  const [edgeTypes] = meta.edge_types;
  const iType = meta.node_fields.indexOf('type');
  const iName = meta.node_fields.indexOf('name');
  const iSize = meta.node_fields.indexOf('self_size');
  const iEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const { nodes, edges, strings } = snap;
  const count = nodes.length / nfl;
  const typeOf = (n: number) => nodeTypes[nodes[n * nfl + iType] as number] as string;
  const nameOf = (n: number) => strings[nodes[n * nfl + iName] as number] as string;
  const sizeOf = (n: number) => nodes[n * nfl + iSize] as number;
  // Each node's first strong retainer, and the edge's name.
  const retainer = new Int32Array(count).fill(-1);
  const via: string[] = new Array(count);
  let e = 0;
  for (let n = 0; n < count; n += 1) {
    const edgeCount = nodes[n * nfl + iEdges] as number;
    for (let k = 0; k < edgeCount; k += 1, e += efl) {
      const type = edgeTypes[edges[e + eType] as number];
      if (type === 'weak' || type === 'shortcut') continue;
      const to = (edges[e + eTo] as number) / nfl;
      if (retainer[to] !== -1) continue;
      retainer[to] = n;
      const name = edges[e + eName] as number;
      via[to] =
        type === 'element'
          ? '[]'
          : type === 'hidden'
            ? '[h]'
            : type === 'context'
              ? `ctx:${strings[name]}`
              : type === 'internal'
                ? `(${strings[name]})`
                : String(strings[name]);
    }
  }
  const isPlain = (n: number) => {
    const t = typeOf(n);
    return (
      t === 'array' ||
      t === 'hidden' ||
      STRING_TYPES.has(t) ||
      (t === 'object' && PLAIN_OBJECTS.has(nameOf(n)))
    );
  };
  const kinds: Tally = new Map();
  const holders: Tally = new Map();
  for (let n = 0; n < count; n += 1) {
    const t = typeOf(n);
    const name = STRING_TYPES.has(t) ? '' : nameOf(n).slice(0, t === 'code' || t === 'hidden' ? 40 : 60);
    add(kinds, `${t} ${name}`, sizeOf(n));
    if (!isPlain(n)) continue;
    const path: string[] = [];
    let at = n;
    for (let d = 0; d < depth && at !== -1; d += 1) {
      path.unshift(via[at] ?? '?');
      at = retainer[at] as number;
      if (at === -1 || !isPlain(at)) break;
    }
    const holder = at === -1 ? 'ROOT' : `${typeOf(at)}:${nameOf(at).slice(0, 40)}`;
    add(holders, `${holder} .${path.join('.')}`.slice(0, 150), sizeOf(n));
  }
  return { kinds, holders };
}

function minus(after: Tally, before: Tally | undefined): Array<[string, number, number]> {
  const rows: Array<[string, number, number]> = [];
  for (const [key, a] of after) {
    const b = before?.get(key) ?? { bytes: 0, count: 0 };
    rows.push([key, a.bytes - b.bytes, a.count - b.count]);
  }
  return rows.sort((x, y) => y[1] - x[1]);
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) =>
    args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback;
  const top = option('--top', 40);
  const depth = option('--depth', 4);
  const files = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
  const [afterFile, beforeFile] = files;
  if (!afterFile) throw new Error('usage: summarise-heapsnapshot AFTER [BEFORE] [--top n] [--depth n]');
  const after = summarise(afterFile, depth);
  const before = beforeFile ? summarise(beforeFile, depth) : undefined;
  const responses = (t: Tally | undefined) => t?.get('object ServerResponse')?.count ?? 0;
  const per = before ? Math.max(1, responses(after.kinds) - responses(before.kinds)) : 1;
  const unit = before ? 'bytes per added request' : 'MB';
  const show = (bytes: number) => (before ? (bytes / per).toFixed(0) : (bytes / 1e6).toFixed(2));
  const total = [...after.kinds.values()].reduce((s, v) => s + v.bytes, 0);
  const totalBefore = before ? [...before.kinds.values()].reduce((s, v) => s + v.bytes, 0) : 0;
  console.log(
    before
      ? `${per} requests (ServerResponse objects) added; ${show(total - totalBefore)} bytes of heap per request`
      : `heap ${show(total)} MB`,
  );
  for (const [title, rows] of [
    ['by kind', minus(after.kinds, before?.kinds)],
    ['plain objects, arrays, contexts and strings by holder', minus(after.holders, before?.holders)],
  ] as const) {
    console.log(`\n${title} (${unit}, count${before ? ' per request' : ''})`);
    for (const [key, bytes, count] of rows.slice(0, top))
      console.log(
        `${show(bytes).padStart(9)}  ${(before ? (count / per).toFixed(2) : String(count)).padStart(8)}  ${key}`,
      );
  }
}

main();
