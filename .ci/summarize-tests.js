// Prints one line per workspace and a closing `<label> Tests: N passed, N failed,
// N skipped` from the files scripts/jest-summary-reporter.js wrote to a folder;
// names each failed test with the first lines of its error; exits 1 when a test
// failed or no workspace reported at all.
const fs = require('node:fs');

const [dir, label = 'npm test'] = process.argv.slice(2);
const files = dir && fs.existsSync(dir) ? fs.readdirSync(dir) : [];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const name of files.sort()) {
  const r = JSON.parse(fs.readFileSync(`${dir}/${name}`, 'utf8'));
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped;
  console.log(`  ${r.workspace}: ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`);
  for (const f of r.failures ?? []) {
    console.log(`    FAILED ${r.workspace}/${f.file}: ${f.test}`);
    for (const line of f.error.split('\n')) console.log(`      ${line}`);
  }
}
console.log(`\n${label}: Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (failed > 0 || files.length === 0) process.exitCode = 1;
