/// <reference types="jest" />
import path from 'node:path';

/**
 * Something a test needs from the machine (a database server, a proxy, a
 * browser), got the same way by every test: the TEST_* server when given, a
 * private one when the binary exists, else the tests that need it are skipped
 * after ONE line on stderr saying what they need. Never a throw in the test.
 */
export type Need<T> = {
  /**
   * What is needed, as the skip line names it: `Redis`, `Postgres`, `nginx`,
   * `Chromium`; empty for a combination, whose `missing` names its parts.
   */
  kind: string;
  /** Why this machine cannot provide it (what to set or install), or undefined when it can. */
  missing: string | undefined;
  /**
   * The thing itself: the TEST_* server, or a private one started now. Call it in
   * a beforeAll of a block from `describeWith`; close() what it returns in afterAll.
   */
  start(): Promise<T>;
};

/** A server a test uses: the shared TEST_* one or one started for it. */
export type TestServer = {
  /** Connection URL (for Postgres, of the server: tests create their own databases on it). */
  url: string;
  /** True for the TEST_* server other tests share (never stopped, keys and databases must be unique). */
  shared: boolean;
  /** Stops a private server and removes its data; nothing for a shared one. */
  close(): Promise<void>;
};

/** The test file being loaded, relative to the repository, when Jest runs it. */
function currentTestFile(): string | undefined {
  const state = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.();
  if (!state?.testPath) return undefined;
  // packages/testing/src/servers -> the repository
  return path.relative(path.resolve(__dirname, '..', '..', '..', '..'), state.testPath);
}

/** What of `needs` this machine lacks, as `Redis (install ...) and nginx (...)`, or undefined. */
export function missingOf(needs: readonly Need<unknown>[]): string | undefined {
  const missing = needs.flatMap((n) =>
    !n.missing ? [] : n.kind ? [`${n.kind} (${n.missing})`] : [n.missing],
  );
  return missing.length === 0 ? undefined : missing.join(' and ');
}

/**
 * `describe` when the machine provides every need, else `describe.skip` after
 * one line on stderr naming the test (default: its file) and what it lacks.
 * Under CI (CI set) a missing need fails the file instead: CI installs every
 * binary (.ci/run), so CI never passes by skipping.
 */
export function describeWith(...args: NeedArgs): jest.Describe {
  return needsMet(...args) ? describe : describe.skip;
}

/**
 * Whether the machine provides every need; when not, writes the one skip line
 * (or, under CI, throws). For tests that choose their cases from it, e.g. a
 * describe.each over backends that adds Postgres when there is one.
 */
export function needsMet(...args: NeedArgs): boolean {
  const [what, needs] =
    typeof args[0] === 'string'
      ? [args[0], args.slice(1) as Need<unknown>[]]
      : [currentTestFile() ?? 'this test', args as Need<unknown>[]];
  const missing = missingOf(needs);
  return report(missing ? `skipped: ${what} needs ${missing}` : undefined);
}

type NeedArgs = [what: string, ...needs: Need<unknown>[]] | Need<unknown>[];

/**
 * `describe`, or `describe.skip` after `skipped: <what> <missing>` on stderr
 * (a failure under CI). Prefer describeWith(needX()); this is for a need that
 * has no helper of its own.
 */
export function describeUnless(missing: string | undefined, what: string): jest.Describe {
  return report(missing ? `skipped: ${what} ${missing}` : undefined) ? describe : describe.skip;
}

/** True when there is no skip line; else prints it (throws under CI) and is false. */
function report(line: string | undefined): boolean {
  if (!line) return true;
  if (process.env.CI) throw new Error(`${line.replace(/^skipped: /, '')} (under CI nothing may be skipped)`);
  process.stderr.write(`${line}\n`);
  return false;
}
