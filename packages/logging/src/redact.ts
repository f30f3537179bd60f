/**
 * Secret redaction applied to every serialized log line, at any depth.
 *
 * pino's own `redact` needs explicit paths; secrets show up under many names and
 * nestings (headers, Stripe payloads, provider errors), so the final JSON line is
 * rewritten instead: any property whose name looks like a secret gets its value
 * replaced, and secret-looking query parameters and bearer tokens inside strings
 * are masked.
 *
 * Log lines carry client input, so this must stay linear in the line's length: the
 * properties are found by a single forward scan (each character is looked at a
 * bounded number of times), never by a regex over the JSON structure, which
 * backtracks exponentially on inputs such as an array of long numbers. The two
 * regexes left run over flat text and cannot backtrack more than one run of
 * whitespace.
 */
import { LRUCache } from 'lru-cache';

export const REDACTED = '[REDACTED]';

const SNAKE = /(?:^|[-_.])(?:key|apikey|secret|token|code|password|passwd|authorization|cookie|signature)$/i;
const CAMEL = /[a-z0-9](?:Key|Secret|Token|Code|Password|Signature)$/;
/** Names that match the patterns above but carry no secret. */
const ALLOWED = new Set(['statusCode', 'status_code', 'errorCode', 'error_code']);

/**
 * A property named `code` is kept when its value reads as an error code: a
 * snake_case word list of letters (`model_not_found`, as @platform/errors names
 * them) or a Node errno (`ECONNREFUSED`, `ERR_STREAM_PREMATURE_CLOSE`). Secret
 * codes (magic links: 43 base64url characters; one-time numbers) do not have
 * that shape, so they stay redacted. Unambiguous patterns over at most 64
 * characters: no backtracking.
 */
const ERROR_CODE_NAME = 'code';
const ERROR_CODE_VALUE = /^"(?:[a-z]+(?:_[a-z]+)*|E[A-Z]+|ERR_[A-Z]+(?:_[A-Z]+)*)"$/;
const MAX_ERROR_CODE_LENGTH = 64;

function isErrorCode(name: string, quotedValue: string): boolean {
  return (
    name === ERROR_CODE_NAME &&
    quotedValue.length <= MAX_ERROR_CODE_LENGTH + 2 &&
    ERROR_CODE_VALUE.test(quotedValue)
  );
}

function testSecretName(name: string): boolean {
  if (ALLOWED.has(name)) return false;
  return SNAKE.test(name) || CAMEL.test(name);
}

/**
 * Property names seen on log lines and their verdict. Lines repeat the same
 * few dozen names (the access log's on every request), so the two regexes run
 * once per name rather than once per property per line. Bounded like every
 * cache of the services (lru-cache): names a client controls (e.g. in an
 * error detail) push out the least recently seen, and long ones are never
 * remembered.
 */
const verdicts = new LRUCache<string, boolean>({ max: 512 });
const MAX_REMEMBERED_NAME = 64;

/**
 * The names of every access-log line (pino's, the logger's and http-log's,
 * and what the AI routes add): their verdicts worked out once, so that the
 * line every request writes costs a Map lookup per name, not the cache's
 * bookkeeping of recency.
 */
const LINE_NAMES = [
  'level',
  'time',
  'service',
  'pid',
  'request_id',
  'req',
  'method',
  'url',
  'remoteAddress',
  'res',
  'statusCode',
  'responseTime',
  'aborted',
  'provider',
  'model',
  'attempts',
  'upstream_ms',
  'msg',
];
const lineVerdicts: ReadonlyMap<string, boolean> = new Map(LINE_NAMES.map((n) => [n, testSecretName(n)]));

export function isSecretName(name: string): boolean {
  const fixed = lineVerdicts.get(name);
  if (fixed !== undefined) return fixed;
  const known = verdicts.get(name);
  if (known !== undefined) return known;
  const secret = testSecretName(name);
  if (name.length <= MAX_REMEMBERED_NAME) verdicts.set(name, secret);
  return secret;
}

const QUERY = /([?&](?:code|token|key|api_key|apikey|secret|password|signature)=)[^&"\s\\]+/gi;
const BEARER = /(Bearer\s+)[A-Za-z0-9._~+/=-]+/g;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}

/**
 * Index just after the JSON string starting at `start` (a quote), or -1 if
 * unterminated: the first quote after it that an odd run of backslashes does
 * not escape (each backslash escapes the character after it). Found with
 * indexOf, which skips plain text far faster than a loop over its characters.
 */
export function stringEnd(s: string, start: number): number {
  for (let quote = s.indexOf('"', start + 1); quote !== -1; quote = s.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (s.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
  }
  return -1;
}

/** Index just after the JSON value starting at `start` that is not an object, or -1. */
function valueEnd(s: string, start: number): number {
  const first = s.charCodeAt(start);
  if (first === QUOTE) return stringEnd(s, start);
  if (first === OPEN_ARRAY) {
    let depth = 0;
    for (let i = start; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === QUOTE) {
        const end = stringEnd(s, i);
        if (end < 0) return -1;
        i = end - 1;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
      else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  let i = start;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c)) break;
    i++;
  }
  return i > start ? i : -1;
}

function propertyName(s: string, start: number, end: number): string {
  const raw = s.slice(start + 1, end - 1);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(s.slice(start, end)) as string;
  } catch {
    return raw;
  }
}

/**
 * Replaces the value of every secret-named property that is a scalar or an array
 * with `"[REDACTED]"`; objects under such names are scanned like any other. One
 * pass: the scan only moves forward, and a skipped value is never re-read.
 */
function redactProperties(line: string): string {
  const parts: string[] = [];
  let copied = 0;
  const inObject: boolean[] = [];
  let expectName = false;
  let i = 0;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(line, i);
      if (end < 0) break;
      if (!expectName) {
        i = end;
        continue;
      }
      expectName = false;
      const colon = skipSpace(line, end);
      if (line.charCodeAt(colon) !== COLON) {
        i = end;
        continue;
      }
      const value = skipSpace(line, colon + 1);
      const name = line.charCodeAt(value) !== OPEN_OBJECT ? propertyName(line, i, end) : undefined;
      if (name !== undefined && isSecretName(name)) {
        const after = valueEnd(line, value);
        if (
          after > value &&
          !isErrorCode(name, line.slice(value, Math.min(after, value + MAX_ERROR_CODE_LENGTH + 3)))
        ) {
          parts.push(line.slice(copied, value), `"${REDACTED}"`);
          copied = after;
          i = after;
          continue;
        }
      }
      i = value;
      continue;
    }
    if (c === OPEN_OBJECT) {
      inObject.push(true);
      expectName = true;
    } else if (c === OPEN_ARRAY) {
      inObject.push(false);
      expectName = false;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      inObject.pop();
      expectName = false;
    } else if (c === COMMA) {
      expectName = inObject[inObject.length - 1] === true;
    }
    i++;
  }
  if (copied === 0) return line;
  parts.push(line.slice(copied));
  return parts.join('');
}

export function redactLine(line: string): string {
  let out = redactProperties(line);
  // Each regex only where it can match (a query parameter needs `=`, a bearer token its word):
  // the same line, without two scans of it on most lines.
  if (out.includes('=')) out = out.replace(QUERY, `$1${REDACTED}`);
  if (out.includes('Bearer')) out = out.replace(BEARER, `$1${REDACTED}`);
  return out;
}

/**
 * Key-shaped tokens in free text: provider and platform secrets by their
 * published prefixes (OpenAI and Anthropic `sk-`, Stripe `sk_`/`rk_`/`whsec_`,
 * Groq `gsk_`, xAI `xai-`, Google `AIza`, GitHub `ghp_`/`github_pat_`, AWS
 * `AKIA`, this gateway's `gw_`), each followed by a long run of key
 * characters. One character class per run after a fixed prefix: linear, no
 * backtracking beyond the run.
 */
const KEY_SHAPED = /\b(?:sk-|sk_|rk_|whsec_|gsk_|xai-|ghp_|github_pat_|gw_|AIza|AKIA)[A-Za-z0-9_-]{16,}/g;

/**
 * Redacts client text kept for people to read (captured prompts and answers,
 * docs/observability.md): the log rules of redactLine (secret-named JSON
 * properties, secret query parameters, bearer tokens) plus key-shaped tokens
 * anywhere in the text, which a log line's property names cannot catch.
 */
export function redactText(text: string): string {
  return redactLine(text).replace(KEY_SHAPED, REDACTED);
}
