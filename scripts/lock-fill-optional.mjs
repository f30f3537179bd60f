#!/usr/bin/env node
// The npm registry reachable from our build machines serves only some platforms'
// native packages (e.g. no darwin/win32 builds of @swc/core, biome, turbo). `npm
// install` then leaves those optional dependencies out of package-lock.json, and
// `npm ci` refuses the lockfile as "out of sync". This adds an entry for each
// missing platform package, with the os/cpu/libc its name declares, so npm skips
// it on other platforms exactly as it would with a complete lockfile; a machine of
// that platform fetches it from the registry as usual.
// Run after every `npm install` that changes package-lock.json: npm run lock:fix
import fs from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const packages = lock.packages;

const OS = {
  android: 'android',
  darwin: 'darwin',
  freebsd: 'freebsd',
  linux: 'linux',
  win32: 'win32',
  windows: 'win32',
  openharmony: 'openharmony',
  sunos: 'sunos',
  aix: 'aix',
  netbsd: 'netbsd',
  openbsd: 'openbsd',
};
const CPU = {
  x64: 'x64',
  64: 'x64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: 'ia32',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  wasm32: 'wasm32',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.map((p) => OS[p]).find(Boolean);
  let cpu = parts.map((p) => CPU[p]).find(Boolean);
  if (!cpu && parts.some((p) => p.startsWith('gnueabihf') || p.startsWith('musleabihf'))) cpu = 'arm';
  const libc = parts.some((p) => p.startsWith('musl'))
    ? 'musl'
    : parts.some((p) => p.startsWith('gnu'))
      ? 'glibc'
      : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    const candidates = [`${base}node_modules/${dep}`, `node_modules/${dep}`];
    if (candidates.some((c) => packages[c])) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os && !cpu) {
      console.warn(`skipped ${dep}: cannot tell its platform from the name`);
      continue;
    }
    packages[`node_modules/${dep}`] = {
      version: spec.replace(/^[\^~=]/, ''),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(os ? { os: [os] } : {}),
      ...(libc ? { libc: [libc] } : {}),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    };
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} platform-specific optional entries`);
