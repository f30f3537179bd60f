import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/** One rendered Kubernetes object. */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
};

type ImageRule = { name: string; newName?: string; newTag?: string; digest?: string };
type PatchTarget = { kind?: string; name?: string; labelSelector?: string };
type PatchRule = { path?: string; patch?: string; target?: PatchTarget };
type Operation = { op: string; path: string; value?: unknown };
type Kustomization = {
  resources?: string[];
  namespace?: string;
  images?: ImageRule[];
  patches?: PatchRule[];
};

/**
 * The part of kustomize the manifests in infra/k8s use, written out so the
 * test needs no kustomize binary: `resources` (files and folders with their own
 * kustomization.yaml), `namespace`, `images` and JSON 6902 `patches` chosen by
 * kind, name or an equality label selector. Any other field, patch form or
 * operation is refused, so a manifest can never lean on something this
 * renderer would silently skip. `kubectl kustomize` gives the same objects.
 */
const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches']);
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'IngressClass',
  'PersistentVolume',
  'PriorityClass',
  'StorageClass',
]);

function readYaml(file: string): unknown {
  return parse(fs.readFileSync(file, 'utf8'));
}

function readObjects(file: string): K8sObject[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((obj): obj is K8sObject => obj !== null);
}

function decodePointer(pointer: string): string[] {
  if (!pointer.startsWith('/')) throw new Error(`patch path must start with "/": ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** RFC 6902 add, replace and remove on a plain JSON value. */
function applyOperation(target: K8sObject, op: Operation): void {
  const parts = decodePointer(op.path);
  const last = parts.pop() as string;
  let parent: unknown = target;
  for (const part of parts) {
    const next = (parent as Record<string, unknown>)?.[part];
    if (next === undefined || next === null || typeof next !== 'object') {
      throw new Error(`patch path ${op.path} does not exist in ${target.kind}/${target.metadata.name}`);
    }
    parent = next;
  }
  const where = `${op.path} in ${target.kind}/${target.metadata.name}`;
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length)
      throw new Error(`bad index: ${where}`);
    if (op.op !== 'add' && index >= parent.length) throw new Error(`${op.op}: no such element: ${where}`);
    if (op.op === 'add') parent.splice(index, 0, op.value);
    else if (op.op === 'replace') parent[index] = op.value;
    else if (op.op === 'remove') parent.splice(index, 1);
    else throw new Error(`unsupported patch operation ${op.op}`);
    return;
  }
  const record = parent as Record<string, unknown>;
  if (op.op !== 'add' && !(last in record)) throw new Error(`${op.op}: no such field: ${where}`);
  switch (op.op) {
    case 'add':
    case 'replace':
      record[last] = op.value;
      return;
    case 'remove':
      delete record[last];
      return;
    default:
      throw new Error(`unsupported patch operation ${op.op}`);
  }
}

function matches(obj: K8sObject, target: PatchTarget = {}): boolean {
  const unknown = Object.keys(target).filter((key) => !['kind', 'name', 'labelSelector'].includes(key));
  if (unknown.length > 0) throw new Error(`unsupported patch target fields: ${unknown.join(', ')}`);
  if (target.kind !== undefined && obj.kind !== target.kind) return false;
  if (target.name !== undefined && obj.metadata.name !== target.name) return false;
  for (const pair of target.labelSelector?.split(',') ?? []) {
    const [key, value, extra] = pair.split('=').map((s) => s.trim());
    if (!key || value === undefined || extra !== undefined)
      throw new Error(`unsupported label selector ${pair}`);
    if (obj.metadata.labels?.[key] !== value) return false;
  }
  return true;
}

function applyPatches(dir: string, objects: K8sObject[], patches: PatchRule[]): void {
  for (const rule of patches) {
    const text = rule.path ? fs.readFileSync(path.resolve(dir, rule.path), 'utf8') : rule.patch;
    const ops = parse(text ?? '') as unknown;
    if (!Array.isArray(ops)) throw new Error('only JSON 6902 patches (a list of operations) are supported');
    const targets = objects.filter((obj) => matches(obj, rule.target));
    if (targets.length === 0) throw new Error(`patch target matches nothing: ${JSON.stringify(rule.target)}`);
    for (const obj of targets) for (const op of ops as Operation[]) applyOperation(obj, op);
  }
}

type PodSpec = { containers?: Array<{ image?: string }>; initContainers?: Array<{ image?: string }> };

function podSpecs(obj: K8sObject): PodSpec[] {
  const spec = obj.spec as
    | { template?: { spec?: PodSpec }; jobTemplate?: { spec?: { template?: { spec?: PodSpec } } } }
    | undefined;
  return [spec?.template?.spec, spec?.jobTemplate?.spec?.template?.spec].filter((s): s is PodSpec => !!s);
}

function splitImage(image: string): { name: string; suffix: string } {
  const at = image.indexOf('@');
  if (at >= 0) return { name: image.slice(0, at), suffix: image.slice(at) };
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/')
    ? { name: image.slice(0, colon), suffix: image.slice(colon) }
    : { name: image, suffix: '' };
}

function applyImages(objects: K8sObject[], rules: ImageRule[]): void {
  for (const obj of objects) {
    for (const spec of podSpecs(obj)) {
      for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
        if (!container.image) continue;
        const { name, suffix } = splitImage(container.image);
        const rule = rules.find((r) => r.name === name);
        if (!rule) continue;
        const tag = rule.digest ? `@${rule.digest}` : rule.newTag ? `:${rule.newTag}` : suffix;
        container.image = `${rule.newName ?? name}${tag}`;
      }
    }
  }
}

/** Renders the kustomization in `dir` (the folder holding kustomization.yaml). */
export function renderKustomization(dir: string): K8sObject[] {
  const file = path.join(dir, 'kustomization.yaml');
  const k = readYaml(file) as Kustomization & Record<string, unknown>;
  const unsupported = Object.keys(k).filter((key) => !SUPPORTED_FIELDS.has(key));
  if (unsupported.length > 0)
    throw new Error(`${file}: unsupported kustomize fields: ${unsupported.join(', ')}`);

  const objects: K8sObject[] = [];
  for (const resource of k.resources ?? []) {
    const target = path.resolve(dir, resource);
    objects.push(...(fs.statSync(target).isDirectory() ? renderKustomization(target) : readObjects(target)));
  }
  const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate) throw new Error(`${file}: ${duplicate} is defined twice`);

  applyPatches(dir, objects, k.patches ?? []);
  applyImages(objects, k.images ?? []);
  if (k.namespace) {
    for (const obj of objects) if (!CLUSTER_SCOPED.has(obj.kind)) obj.metadata.namespace = k.namespace;
  }
  return objects;
}
