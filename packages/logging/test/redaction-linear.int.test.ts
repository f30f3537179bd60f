import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { redactLine } from '../src';

const REDACT_SOURCE = path.join(__dirname, '..', 'src', 'redact.ts');

/**
 * Runs redactLine on `line` in a child process and resolves with its output, or
 * rejects when it has not finished within `limitMs`. A backtracking regex blocks
 * its thread for hours on these inputs, which no in-process timeout can interrupt.
 */
function redactInChild(line: string, limitMs: number): Promise<string> {
  // redact.ts has no imports: Node runs its source directly with type stripping.
  const script = `${readFileSync(REDACT_SOURCE, 'utf8')}
    let input = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (c) => { input += c; });
    process.stdin.on('end', () => { process.stdout.write(redactLine(input)); });`;
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--no-warnings', '--input-type=module-typescript', '-e', script],
      { timeout: limitMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
    child.stdin?.end(line);
  });
}

const digits = (n: number) => '1'.repeat(n);

describe('redaction on adversarial lines', () => {
  it('finishes an array of long numbers followed by a nested value (took hours with the old regex)', async () => {
    const line = `${JSON.stringify({
      msg: 'stripe event',
      type: '__ARRAY__',
      code: 'mag1cC0d3-ZXY987',
    }).replace('"__ARRAY__"', `[${digits(10_000)},${digits(10_000)},${digits(30)},{"a":[1]}]`)}\n`;
    const out = await redactInChild(line, 20_000);
    expect(out).toContain(digits(10_000));
    expect(out).toContain('"code":"[REDACTED]"');
    expect(out).not.toContain('mag1cC0d3');
  }, 30_000);

  it('finishes 1 MB strings, many short numbers and deep nesting in one line', async () => {
    const big = 'a'.repeat(1024 * 1024);
    const manyNumbers = `[${Array.from({ length: 50_000 }, () => '12').join(',')},{"x":1}]`;
    const nested = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    const line = `{"s":"${big}","escaped":"${'\\\\'.repeat(100_000)}","n":${manyNumbers},"deep":${nested},"token":"t0k3n-s3cr3t","url":"/x?code=abc${big}"}\n`;
    const out = await redactInChild(line, 20_000);
    expect(out).toContain('"token":"[REDACTED]"');
    expect(out).not.toContain('t0k3n-s3cr3t');
    expect(out).toContain('?code=[REDACTED]');
  }, 30_000);

  it('redacts secret names at any depth, in arrays and after escaped quotes', () => {
    const line = JSON.stringify({
      a: { 'x-api-key': 'k1', list: [{ token: 't1' }, [{ password: ['p1', 'p2'] }]] },
      'we\\"ird': 'keep',
      note: 'say "hi"',
      stripeSecretKey: { nested: 'v' },
      headers: { authorization: 'Bearer abc.def', cookie: 'gw_session=1' },
      err: { statusCode: 401, code: 'E1' },
    });
    const out = JSON.parse(redactLine(line));
    expect(out).toEqual({
      a: { 'x-api-key': '[REDACTED]', list: [{ token: '[REDACTED]' }, [{ password: '[REDACTED]' }]] },
      'we\\"ird': 'keep',
      note: 'say "hi"',
      stripeSecretKey: { nested: 'v' },
      headers: { authorization: '[REDACTED]', cookie: '[REDACTED]' },
      err: { statusCode: 401, code: '[REDACTED]' },
    });
  });

  it('leaves a line that is not JSON readable and still masks bearer tokens in it', () => {
    expect(redactLine('plain Bearer abc.def {"code": ')).toBe('plain Bearer [REDACTED] {"code": ');
  });
});
