/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type checking is done once by `tsc --noEmit` in `npm test`; ts-jest only transpiles.
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // In-process tests load the real registrations through the local host's functions-core,
  // as the Node worker provides it to @azure/functions in production.
  moduleNameMapper: { '^@azure/functions-core$': '<rootDir>/tools/localHost/coreApi.ts' },
  testTimeout: 30000,
  reporters: ['<rootDir>/test/helpers/quietPassingReporter.js', '<rootDir>/test/helpers/plainSummaryReporter.js'],
  maxWorkers: 2,
  // Even a single file's run buffers its console, so a passing file prints nothing there either.
  verbose: false,
};
