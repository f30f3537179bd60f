import { invalidRequest } from './errors';

/** A decoded form value: arrays arrive as objects keyed "0", "1", ... and are shaped by the param spec later. */
export type FormValue = string | FormObject;
export type FormObject = { [key: string]: FormValue };

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;

/**
 * Decodes Stripe's bracket encoding (`line_items[0][price]=x`, `expand[]=y`,
 * `metadata[k]=v`) from a form body or a query string into nested objects.
 * Containers have no prototype so keys like `__proto__` stay plain data.
 */
export function parseStripeForm(encoded: string): FormObject {
  const root: FormObject = Object.create(null);
  for (const [rawKey, value] of new URLSearchParams(encoded)) {
    const match = KEY.exec(rawKey);
    if (!match?.[1]) throw invalidRequest(`Invalid parameter name: ${rawKey}`);
    const path = [match[1], ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '')];
    assign(root, path, value, rawKey);
  }
  return root;
}

function assign(root: FormObject, path: string[], value: string, rawKey: string): void {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i] ?? '';
    // `[]` appends, the way Rails/Stripe read `expand[]=a&expand[]=b`.
    const key = segment === '' ? String(Object.keys(node).length) : segment;
    if (i === path.length - 1) {
      if (typeof node[key] === 'object') throw invalidRequest(`Invalid parameter: ${rawKey} is given twice`);
      node[key] = value;
      return;
    }
    const next = node[key];
    if (next === undefined) {
      const child: FormObject = Object.create(null);
      node[key] = child;
      node = child;
    } else if (typeof next === 'string') {
      throw invalidRequest(`Invalid parameter: ${rawKey} mixes a value and a hash`);
    } else {
      node = next;
    }
  }
}
