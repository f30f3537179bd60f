import { invalidRequest } from './errors';
import type { FakeCustomer } from './objects';

type Clause = { field: string; key?: string; op: ':' | '~'; value: string; negate: boolean };

const CLAUSE = /^(-)?(\w+)(?:\[['"]([^'"]+)['"]\])?\s*([:~])\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")$/;
const FIELDS = new Set(['email', 'name', 'phone', 'metadata']);

/**
 * Parses the subset of Stripe's search language the platform uses for customers:
 * `email:'a@b.c'`, `metadata['user_id']:'u1'`, `name~'Ann'`, negation with `-`,
 * clauses joined by AND or by OR (Stripe does not allow mixing them).
 */
export function compileCustomerQuery(query: string): (customer: FakeCustomer) => boolean {
  const hasAnd = /\sAND\s/.test(query);
  const hasOr = /\sOR\s/.test(query);
  if (hasAnd && hasOr) {
    throw invalidRequest('Mixing AND and OR in the same query is not supported.', 'query');
  }
  const parts = query.split(hasOr ? /\s+OR\s+/ : /\s+AND\s+/).map((part) => part.trim());
  const clauses = parts.map(parseClause);
  const test = (customer: FakeCustomer, clause: Clause) => matches(customer, clause) !== clause.negate;
  return hasOr
    ? (customer) => clauses.some((clause) => test(customer, clause))
    : (customer) => clauses.every((clause) => test(customer, clause));
}

function parseClause(text: string): Clause {
  const match = CLAUSE.exec(text);
  if (!match) {
    throw invalidRequest(
      `We were unable to parse your search query. Try using the format \`metadata["key"]:"value"\` to query for metadata or \`key:"value"\` to query for other fields.`,
      'query',
    );
  }
  const [, negate, field = '', key, op, single, double] = match;
  if (!FIELDS.has(field)) {
    throw invalidRequest(
      `Field '${field}' is an unsupported search field for resource customers. See http://stripe.com/docs/search#query-fields-for-customers for a list of supported fields.`,
      'query',
    );
  }
  if (field === 'metadata' && key === undefined) {
    throw invalidRequest('Metadata queries must name a key, e.g. metadata["key"]:"value".', 'query');
  }
  const value = (single ?? double ?? '').replace(/\\(.)/g, '$1');
  if (op === '~' && value.length < 3) {
    throw invalidRequest('Substring queries (~) need at least 3 characters.', 'query');
  }
  return { field, op: op as ':' | '~', value, negate: negate === '-', ...(key ? { key } : {}) };
}

function matches(customer: FakeCustomer, clause: Clause): boolean {
  const actual =
    clause.field === 'metadata'
      ? customer.metadata[clause.key ?? '']
      : (customer[clause.field as 'email' | 'name' | 'phone'] ?? undefined);
  if (actual === undefined) return false;
  // Stripe matches email and name case-insensitively; metadata values exactly.
  const fold = clause.field !== 'metadata';
  const left = fold ? actual.toLowerCase() : actual;
  const right = fold ? clause.value.toLowerCase() : clause.value;
  return clause.op === '~' ? left.includes(right) : left === right;
}
