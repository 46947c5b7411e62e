import { readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string
}

export default defineConfig({
  // As the build defines it (scripts/build.mjs): code run inside the tests records the version the binary does.
  define: { HARNESS_VERSION: JSON.stringify(pkg.version) },
  test: {
    // End-to-end tests spawn the built CLI and real agents; give them room on a 2-core machine, also while
    // other suites run beside this one (a test that takes 10 s on an idle machine took 50 s at load 10).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // One worker per core: the tests spawn processes of their own, so more workers only contend.
    maxWorkers: 2,
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/fast-lane.ts', 'test/helpers/file-setup.ts'],
    // `npm run test:fast` leaves out what is tagged: the unit tests that start a process other than git
    // (test/helpers/fast-lane.ts holds the lane to that).
    tags: [
      {
        name: 'process',
        description: 'starts a process other than git (npm test runs it; test:fast does not)',
      },
    ],
    projects: [
      {
        extends: true,
        // In-process tests share one module graph per worker (no per-file fork and re-import): they keep no
        // global state between files, and the temp folders are removed after each file (file-setup.ts). Worker
        // processes, not threads: many of these tests start git, and starting a process from the one large
        // process of a thread pool cost more system time (unit files in threads 37 s and 60 s of CPU, in
        // forks 31 s and 49 s).
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], pool: 'forks', isolate: false },
      },
      {
        extends: true,
        // Real processes, signals and terminals, in child processes (not worker threads: signals and terminals
        // belong to a process). Each worker process runs file after file without a fresh start and module graph
        // for each: the files keep no global state, they only start processes and make temp folders (removed
        // after each file, file-setup.ts), and the template repositories of tmp.ts are made once per worker.
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/reliability/**/*.test.ts'],
          pool: 'forks',
          isolate: false,
        },
      },
      {
        extends: true,
        // The real agent CLIs, installed from npm into node_modules/.cache (test/real/install.ts), driven by
        // scripted model servers on loopback. `npm test` runs them with the rest; offline they skip, saying so.
        test: { name: 'real', include: ['test/real/**/*.test.ts'], pool: 'forks', isolate: false },
      },
    ],
  },
})
