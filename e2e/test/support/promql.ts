/**
 * The metric names a PromQL expression reads, for checking dashboards and
 * alert rules against what the services export. Not a PromQL parser: it drops
 * strings, label matchers `{...}`, ranges `[...]` and the label lists of
 * by/without/on/ignoring/group_left/group_right, then keeps the identifiers
 * that are not called as a function and are not a keyword. Linear scanning,
 * no regular expression over the text.
 */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
/** Aggregation operators: `sum by (x) (...)` puts the label list between the name and its `(`. */
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
]);
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

const isIdentStart = (c: string) =>
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === ':';
const isIdentPart = (c: string) => isIdentStart(c) || (c >= '0' && c <= '9');

/** Index after the bracket that closes the one at `start`. */
function skipBracket(expr: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let i = start; i < expr.length; i++) {
    if (expr[i] === open) depth++;
    else if (expr[i] === close && --depth === 0) return i + 1;
  }
  return expr.length;
}

function nextNonSpace(expr: string, from: number): number {
  let i = from;
  while (i < expr.length && (expr[i] === ' ' || expr[i] === '\n' || expr[i] === '\t')) i++;
  return i;
}

export function metricNamesOf(expr: string): string[] {
  const names = new Set<string>();
  let i = 0;
  while (i < expr.length) {
    const c = expr[i] as string;
    if (c === '"' || c === "'" || c === '`') {
      const end = expr.indexOf(c, i + 1);
      i = end < 0 ? expr.length : end + 1;
    } else if (c === '{') i = skipBracket(expr, i, '{', '}');
    else if (c === '[') i = skipBracket(expr, i, '[', ']');
    else if (c >= '0' && c <= '9') {
      while (i < expr.length && (isIdentPart(expr[i] as string) || expr[i] === '.')) i++;
    } else if (isIdentStart(c)) {
      const start = i;
      while (i < expr.length && isIdentPart(expr[i] as string)) i++;
      const word = expr.slice(start, i);
      const after = nextNonSpace(expr, i);
      if (LABEL_LISTS.has(word.toLowerCase())) {
        if (expr[after] === '(') i = skipBracket(expr, after, '(', ')');
      } else if (
        expr[after] !== '(' &&
        !KEYWORDS.has(word.toLowerCase()) &&
        !AGGREGATIONS.has(word.toLowerCase())
      )
        names.add(word);
    } else i++;
  }
  return [...names];
}
