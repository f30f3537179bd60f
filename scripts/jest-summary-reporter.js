// Writes each workspace's test counts to $JEST_SUMMARY_DIR so .ci/run can print
// one closing "N passed, N failed" line for the whole monorepo, and names what failed
// (file, test, the first lines of its error) so a failure CI saw once can be found.
const fs = require('node:fs');
const path = require('node:path');
const { stripVTControlCharacters } = require('node:util');

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
      failures: failuresOf(results, this.rootDir),
    };
    fs.writeFileSync(path.join(dir, `${name}-${process.pid}.json`), JSON.stringify(summary));
  }
}

/** Each failed test, or suite that failed to run: where, which, and its error's first lines. */
function failuresOf(results, rootDir) {
  const failures = [];
  for (const file of results.testResults) {
    const where = path.relative(rootDir, file.testFilePath);
    if (file.testExecError || (file.failureMessage && file.numFailingTests === 0)) {
      failures.push({ file: where, test: '(suite failed to run)', error: firstLines(file.failureMessage) });
    }
    for (const test of file.testResults) {
      if (test.status !== 'failed') continue;
      failures.push({ file: where, test: test.fullName, error: firstLines(test.failureMessages.join('\n')) });
    }
  }
  return failures;
}

function firstLines(text) {
  // Colours off: the summary is read in plain CI logs.
  return stripVTControlCharacters(String(text ?? ''))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 8)
    .join('\n');
}

module.exports = SummaryReporter;
