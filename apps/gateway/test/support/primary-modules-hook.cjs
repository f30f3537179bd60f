// Loaded with --require into a cluster service (cluster.int.test.ts): on SIGUSR2 the
// primary writes the packages it has loaded from node_modules to PRIMARY_MODULES_FILE.
// Workers inherit the flag and do nothing (the primary never forwards SIGUSR2).
const cluster = require('node:cluster');
if (cluster.isPrimary && process.env.PRIMARY_MODULES_FILE) {
  process.on('SIGUSR2', () => {
    const packages = new Set();
    for (const file of Object.keys(require.cache)) {
      const at = file.lastIndexOf('/node_modules/');
      if (at === -1) continue;
      const parts = file.slice(at + '/node_modules/'.length).split('/');
      packages.add(parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]);
    }
    require('node:fs').writeFileSync(process.env.PRIMARY_MODULES_FILE, JSON.stringify([...packages]));
  });
}
