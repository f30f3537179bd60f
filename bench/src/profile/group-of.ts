/** The file or package a profile frame's URL belongs to: a package under node_modules, a node: module, our apps/ or packages/ file. */
export function groupOf(url: string): string {
  if (!url) return '(native/vm)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const m = /(apps|packages)\/[^/]+\/(?:dist|src)\/.*$/.exec(url);
  return m ? m[0] : url;
}
