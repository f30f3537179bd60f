/**
 * Secret redaction applied to every serialized log line, at any depth.
 *
 * pino's own `redact` needs explicit paths; secrets show up under many names and
 * nestings (headers, Stripe payloads, provider errors), so the final JSON line is
 * rewritten instead: any property whose name looks like a secret gets its value
 * replaced, and secret-looking query parameters inside strings are masked. This
 * runs as one native regex pass per line.
 */
export const REDACTED = '[REDACTED]';

const SNAKE = /(?:^|[-_.])(?:key|apikey|secret|token|code|password|passwd|authorization|cookie|signature)$/i;
const CAMEL = /[a-z0-9](?:Key|Secret|Token|Code|Password|Signature)$/;
/** Names that match the patterns above but carry no secret. */
const ALLOWED = new Set(['statusCode', 'status_code', 'errorCode', 'error_code']);

export function isSecretName(name: string): boolean {
  if (ALLOWED.has(name)) return false;
  return SNAKE.test(name) || CAMEL.test(name);
}

const STR = '"(?:[^"\\\\]|\\\\.)*"';
const SCALAR = `${STR}|-?\\d[\\d.eE+-]*|true|false|null`;
const ARRAY = `\\[\\s*(?:(?:${SCALAR})\\s*,?\\s*)*\\]`;
const PROPERTY = new RegExp(`"([A-Za-z0-9_.-]+)":(${ARRAY}|${SCALAR})`, 'g');
const QUERY = /([?&](?:code|token|key|api_key|apikey|secret|password|signature)=)[^&"\s\\]+/gi;
const BEARER = /(Bearer\s+)[A-Za-z0-9._~+/=-]+/g;

export function redactLine(line: string): string {
  return line
    .replace(PROPERTY, (whole, name: string) => (isSecretName(name) ? `"${name}":"${REDACTED}"` : whole))
    .replace(QUERY, `$1${REDACTED}`)
    .replace(BEARER, `$1${REDACTED}`);
}
