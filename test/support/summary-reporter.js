// A Jest reporter that ends the run with one plain line, `jest: N passed, N failed, N skipped`, the
// closing line CI reads in any language (Jest's own summary has another shape).
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    globalThis.process.stdout.write(
      `\njest: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
