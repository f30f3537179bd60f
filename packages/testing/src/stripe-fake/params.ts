import { invalidRequest } from './errors';
import type { FormObject, FormValue } from './form';

/** How one request parameter is checked and coerced; mirrors the checks Stripe makes before a handler runs. */
export type ParamSpec =
  | { kind: 'string'; required?: boolean; values?: readonly string[]; format?: 'email' }
  | { kind: 'integer'; required?: boolean; min?: number; max?: number }
  | { kind: 'boolean'; required?: boolean }
  | { kind: 'metadata'; required?: boolean }
  | { kind: 'object'; required?: boolean; fields: ParamFields }
  | { kind: 'array'; required?: boolean; of: ParamSpec }
  /** Accepted and passed through unchecked: real params the fake does not model. */
  | { kind: 'any'; required?: boolean };

export type ParamFields = Record<string, ParamSpec>;

/** Spec builders, so endpoint tables read like Stripe's reference. */
export const p = {
  string: (opts: { required?: boolean } = {}): ParamSpec => ({ kind: 'string', ...opts }),
  email: (): ParamSpec => ({ kind: 'string', format: 'email' }),
  oneOf: (values: readonly string[], opts: { required?: boolean } = {}): ParamSpec => ({
    kind: 'string',
    values,
    ...opts,
  }),
  integer: (opts: { required?: boolean; min?: number; max?: number } = {}): ParamSpec => ({
    kind: 'integer',
    ...opts,
  }),
  boolean: (): ParamSpec => ({ kind: 'boolean' }),
  metadata: (): ParamSpec => ({ kind: 'metadata' }),
  object: (fields: ParamFields, opts: { required?: boolean } = {}): ParamSpec => ({
    kind: 'object',
    fields,
    ...opts,
  }),
  array: (of: ParamSpec, opts: { required?: boolean } = {}): ParamSpec => ({ kind: 'array', of, ...opts }),
  any: (): ParamSpec => ({ kind: 'any' }),
  expand: (): ParamSpec => ({ kind: 'array', of: { kind: 'string' } }),
};

/** Names given as "accepted, not modelled" in bulk. */
export function anyOf(...names: string[]): ParamFields {
  return Object.fromEntries(names.map((name) => [name, p.any()]));
}

/**
 * Checks `input` against `fields` and returns the coerced params (numbers,
 * booleans, arrays). Empty strings mean "unset" as in Stripe and come back as null.
 */
export function validateParams(input: FormObject, fields: ParamFields, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(input)) {
    if (!(key in fields)) throw unknownParam(join(prefix, key), Object.keys(fields));
  }
  for (const [key, spec] of Object.entries(fields)) {
    const value = input[key];
    const path = join(prefix, key);
    if (value === undefined) {
      if (spec.required) throw invalidRequest(`Missing required param: ${path}.`, path, 'parameter_missing');
      continue;
    }
    out[key] = coerce(value, spec, path);
  }
  return out;
}

function coerce(value: FormValue, spec: ParamSpec, path: string): unknown {
  if (value === '') {
    if (spec.required) {
      throw invalidRequest(
        `You passed an empty string for '${path}'. We assume empty values are an attempt to unset a parameter; however '${path}' cannot be unset. You should remove '${path}' from your request or supply a non-empty value.`,
        path,
        'parameter_invalid_empty',
      );
    }
    return null;
  }
  switch (spec.kind) {
    case 'any':
      return value;
    case 'string':
      if (typeof value !== 'string') throw invalidRequest(`Invalid string: ${JSON.stringify(value)}`, path);
      if (spec.values && !spec.values.includes(value)) {
        throw invalidRequest(`Invalid ${lastSegment(path)}: must be one of ${listWords(spec.values)}`, path);
      }
      if (spec.format === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) {
        throw invalidRequest(`Invalid email address: ${value}`, path, 'email_invalid');
      }
      return value;
    case 'integer': {
      if (typeof value !== 'string' || !/^-?\d+$/.test(value)) {
        throw invalidRequest(`Invalid integer: ${String(value)}`, path, 'parameter_invalid_integer');
      }
      const n = Number(value);
      if (spec.min !== undefined && n < spec.min) {
        throw invalidRequest(`This value must be greater than or equal to ${spec.min}.`, path);
      }
      if (spec.max !== undefined && n > spec.max) {
        throw invalidRequest(`This value must be less than or equal to ${spec.max}.`, path);
      }
      return n;
    }
    case 'boolean':
      if (value !== 'true' && value !== 'false')
        throw invalidRequest(`Invalid boolean: ${String(value)}`, path);
      return value === 'true';
    case 'metadata':
      return coerceMetadata(value, path);
    case 'object':
      if (typeof value === 'string') throw invalidRequest('Invalid object', path);
      return validateParams(value, spec.fields, path);
    case 'array': {
      if (typeof value === 'string') throw invalidRequest('Invalid array', path);
      const keys = Object.keys(value);
      if (!keys.every((k) => /^\d+$/.test(k))) throw invalidRequest('Invalid array', path);
      return keys
        .sort((a, b) => Number(a) - Number(b))
        .map((k) => coerce(value[k] as FormValue, spec.of, `${path}[${k}]`));
    }
  }
}

function coerceMetadata(value: FormValue, path: string): Record<string, string | null> {
  if (typeof value === 'string') throw invalidRequest('Invalid object', path);
  const out: Record<string, string | null> = Object.create(null);
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string')
      throw invalidRequest('Invalid metadata: values must be strings', `${path}[${key}]`);
    if (key.length > 40) {
      throw invalidRequest(
        `Metadata keys can have up to 40 characters, but you passed in a key that is ${key.length} characters. Invalid key: ${key}`,
        `${path}[${key}]`,
      );
    }
    if (v.length > 500) {
      throw invalidRequest(
        `Metadata values can have up to 500 characters, but you passed in a value that is ${v.length} characters. Invalid value: ${v}`,
        `${path}[${key}]`,
      );
    }
    out[key] = v === '' ? null : v;
  }
  if (Object.keys(out).length > 50) {
    throw invalidRequest('Invalid metadata: metadata can have up to 50 keys.', path);
  }
  return out;
}

function unknownParam(path: string, known: string[]): Error {
  const name = lastSegment(path);
  const guess = known.find((k) => distance(k, name) <= 2);
  const hint = guess ? `. Did you mean ${guess}?` : '';
  return invalidRequest(`Received unknown parameter: ${path}${hint}`, path, 'parameter_unknown');
}

function join(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}[${key}]`;
}

function lastSegment(path: string): string {
  const match = /\[([^[\]]*)\]$/.exec(path);
  return match?.[1] ?? path;
}

function listWords(values: readonly string[]): string {
  if (values.length <= 1) return values.join('');
  return `${values.slice(0, -1).join(', ')}, or ${values.at(-1)}`;
}

/** Levenshtein distance, for Stripe's "Did you mean" hint on misspelt params. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] ?? 0;
      row[j] = Math.min(current + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length] ?? 0;
}
