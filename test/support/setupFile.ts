/** Run by vitest before each test file (vitest.config.ts): its last `afterAll` puts away what the file made. */
import { afterAll } from 'vitest';
import { putAway } from './afterFile.js';

afterAll(putAway);
