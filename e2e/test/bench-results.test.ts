import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './support/compose';

// Issue 13's "Must show", checked on what is committed: the recorded side-by-side
// runs with their files and charts, the before/after comparison, the chart on
// the README's first screen (and the figure quoted beside it), and the per-core
// expectations in docs/performance.md. The numbers themselves are measured by
// `npm run peers` / `npm run streams` (bench/README.md), never in a test.

const RESULTS = path.join(ROOT, 'bench', 'results');
const resultsReadme = fs.readFileSync(path.join(RESULTS, 'README.md'), 'utf8');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const performance = fs.readFileSync(path.join(ROOT, 'docs', 'performance.md'), 'utf8');

type Recorded = {
  scenario: string;
  git: { sha: string };
  ratios?: { loadedReqPerSecOursOverPortkey?: number };
};

const readRecord = (file: string) =>
  JSON.parse(fs.readFileSync(path.join(RESULTS, file), 'utf8')) as Recorded;

/** A chart the bench wrote: an SVG document with bars (rects) and labels (text). */
function expectChart(file: string): void {
  const svg = fs.readFileSync(path.join(RESULTS, file), 'utf8');
  expect({ file, svg: svg.trimStart().startsWith('<svg') }).toEqual({ file, svg: true });
  expect(svg).toMatch(/<rect\b/);
  expect(svg).toMatch(/<text\b/);
}

/** The recorded sections of the side-by-side scenarios, with their heading's commit and linked files. */
function sideBySideRuns() {
  const runs: Array<{ kind: 'peers' | 'streams'; sha: string; json: string; svg: string }> = [];
  const heading = /^## (Peers|Stream capacity): [0-9-]+ [0-9:]+ UTC, ([0-9a-f]{7})/gm;
  for (const match of resultsReadme.matchAll(heading)) {
    const start = (match.index ?? 0) + match[0].length;
    const next = resultsReadme.indexOf('\n## ', start);
    const body = resultsReadme.slice(start, next === -1 ? undefined : next);
    const files = /Files: \[([^\]]+\.json)\]\(\1\), chart \[([^\]]+\.svg)\]\(\2\)/.exec(body);
    if (!files?.[1] || !files[2]) continue;
    runs.push({
      kind: match[1] === 'Peers' ? 'peers' : 'streams',
      sha: match[2] as string,
      json: files[1],
      svg: files[2],
    });
  }
  return runs;
}

describe('issue 13: recorded side-by-side runs (bench/results)', () => {
  const runs = sideBySideRuns();

  it('has peers and stream-capacity runs, each with its JSON record and chart, of the commit its heading names', () => {
    expect(runs.filter((r) => r.kind === 'peers').length).toBeGreaterThanOrEqual(2);
    expect(runs.filter((r) => r.kind === 'streams').length).toBeGreaterThanOrEqual(2);
    for (const run of runs) {
      const record = readRecord(run.json);
      expect({ file: run.json, scenario: record.scenario, sha: record.git.sha }).toEqual({
        file: run.json,
        scenario: run.kind,
        sha: run.sha,
      });
      expectChart(run.svg);
    }
  });

  it('puts the runs after the changes beside the runs before them, charts side by side', () => {
    const start = resultsReadme.indexOf('## Issue 13, gateway hot path: before and after, side by side');
    expect(start).toBeGreaterThan(-1);
    const section = resultsReadme.slice(start, resultsReadme.indexOf('\n## ', start + 1));
    const pairs = [...section.matchAll(/\| !\[before\]\(([^)]+\.svg)\) \| !\[after\]\(([^)]+\.svg)\) \|/g)];
    const kinds = pairs.map(([, before, after]) => {
      const b = readRecord((before as string).replace(/\.svg$/, '.json'));
      const a = readRecord((after as string).replace(/\.svg$/, '.json'));
      expect(b.scenario).toBe(a.scenario);
      expect(b.git.sha).not.toBe(a.git.sha);
      expectChart(before as string);
      expectChart(after as string);
      return a.scenario;
    });
    expect(kinds.sort()).toEqual(['peers', 'streams']);
  });
});

describe("issue 13: the README's first screen and the per-core doc", () => {
  it('links the latest peers chart, a recorded run whose ratio is the one quoted beside it', () => {
    const firstScreen = readme.split('\n').slice(0, 45).join('\n');
    expect(firstScreen).toContain('(bench/results/peers-latest.svg)');
    const latest = fs.readFileSync(path.join(RESULTS, 'peers-latest.svg'), 'utf8');
    const run = sideBySideRuns().find(
      (r) => r.kind === 'peers' && fs.readFileSync(path.join(RESULTS, r.svg), 'utf8') === latest,
    );
    expect(run).toBeDefined();
    const quoted = /\(([0-9.]+)x in the\s+latest run\)/.exec(firstScreen)?.[1];
    expect(quoted).toBeDefined();
    expect(readRecord((run as { json: string }).json).ratios?.loadedReqPerSecOursOverPortkey).toBe(
      Number(quoted),
    );
  });

  it('says what a production deployment should expect per core, and where each target stands', () => {
    const start = performance.indexOf('## Per core, in production');
    expect(start).toBeGreaterThan(-1);
    const perCore = performance.slice(start, performance.indexOf('\n## ', start + 1));
    expect(perCore).toMatch(/\| `POST \/api\/v1\/ai\/chat\/completions`[^|]*\|\s*[0-9.]+\s*\|/);
    expect(perCore).toMatch(/\| `GET \/health`\s*\|\s*[0-9.]+\s*\|/);
    const targets = performance.slice(performance.indexOf('\n## Targets'));
    for (const target of [
      'loaded ≥ 3x Portkey',
      'sequential added latency',
      'per-chunk added delay',
      'added TTFC',
      'peak RSS ≤ 250 MB',
      'subscription-status',
      '`/health` ≥ 15,000',
    ])
      expect({ target, documented: targets.includes(target) }).toEqual({ target, documented: true });
  });
});
