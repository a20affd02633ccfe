// Ends a jest run with the plain closing line any CI reads: "N passed, N failed".
class PlainSummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
    process.stdout.write(`\n${line}\n`);
  }
}

module.exports = PlainSummaryReporter;
