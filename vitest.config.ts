import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'console/src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A test waits for what it expects; the timeout only catches a hang (vitest's own default is 1 s).
    expect: { poll: { timeout: 20_000 } },
    reporters: ['default', './test/support/summaryReporter.ts'],
    // A temp directory of the run's own, empty at its end; each file puts away what it made.
    globalSetup: ['./test/support/emptyTempDir.ts'],
    setupFiles: ['./test/support/setupFile.ts'],
    // Every take the SQLite store answers from memory also reads the file, and a difference fails the
    // test (src/store/sqlite/takes/verifyTakes.ts); hubs the tests start as processes inherit it and end.
    env: { HUB_TEST_VERIFY_TAKES: '1' },
  },
});
