/**
 * Run by vitest before each test file (vitest.config.ts): its last `afterAll` puts away what the file
 * made; after each test, no take the SQLite store answered from memory (StateObjects' or messages')
 * differed from the file (the suite runs with HUB_TEST_VERIFY_TAKES=1: src/store/sqlite/takes/verifyTakes.ts).
 */
import { afterAll, afterEach, expect } from 'vitest';
import { takeMemoryDifferences } from '../../src/store/sqlite/takes/verifyTakes.js';
import { putAway } from './afterFile.js';

afterEach(() => {
  expect(takeMemoryDifferences()).toEqual([]);
});
afterAll(putAway);
