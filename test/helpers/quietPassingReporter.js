// Jest's default reporter, less the console output of test files that passed: a passing run
// reads as a list of files, and a failing file still shows everything it logged.
const { DefaultReporter } = require('@jest/reporters');

class QuietPassingReporter extends DefaultReporter {
  printTestFileHeader(testPath, config, result) {
    const passed = result.numFailingTests === 0 && !result.testExecError && !result.failureMessage;
    super.printTestFileHeader(testPath, config, passed ? { ...result, console: undefined } : result);
  }
}

module.exports = QuietPassingReporter;
