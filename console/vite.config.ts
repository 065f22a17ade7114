/** The console's build: console/ → dist/console, served by the hub at /console/ (under the listen prefix, if any) (src/http/consoleAssets.ts). */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  // Relative asset URLs: the same build works at /console/ and under any path prefix (/constellation/console/).
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // One small bundle: a console is used on a LAN, one request each for script and style is enough.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
