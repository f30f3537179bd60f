// Writes each workspace's test counts to $JEST_SUMMARY_DIR so .ci/run can print
// one closing "N passed, N failed" line for the whole monorepo.
const fs = require('node:fs');
const path = require('node:path');

class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }
  onRunComplete(_contexts, results) {
    const dir = process.env.JEST_SUMMARY_DIR;
    if (!dir) return;
    fs.mkdirSync(dir, { recursive: true });
    const name = path.basename(this.rootDir);
    const summary = {
      workspace: name,
      passed: results.numPassedTests,
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
    };
    fs.writeFileSync(path.join(dir, `${name}-${process.pid}.json`), JSON.stringify(summary));
  }
}
module.exports = SummaryReporter;
