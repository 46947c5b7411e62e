// The lazy command registry (npm's lib/npm.js pattern): the one place where the CLI decides what loads when a
// command runs rather than at start. Building the command tree loads each command's declaration (its flags
// and help); what its action calls loads through one entry here, a group of the services and renderers that
// a few commands share (cli/services/), so a command pays only for its own group. Below an entry, modules
// import each other statically. The native build makes each entry a chunk (docs/development/native.md). The
// entries a Context itself uses (records, config, stop, chainsStore) are kept apart: a reading command must
// not load the acting ones (test/unit/layers.test.ts), nor the plain show zod.
export const lazy = {
  allProjects: () => import('../sessions/query/all-projects.js'),
  chains: () => import('./services/chains.js'),
  chainsStore: () => import('../sessions/chains/store.js'),
  completion: () => import('./services/completion.js'),
  config: () => import('../config.js'),
  control: () => import('./services/control.js'),
  logs: () => import('./services/logs.js'),
  reading: () => import('./services/reading.js'),
  records: () => import('./services/records.js'),
  removal: () => import('./services/removal.js'),
  run: () => import('./services/run.js'),
  setup: () => import('./services/setup.js'),
  stats: () => import('./services/stats.js'),
  stop: () => import('../process/stop.js'),
  wait: () => import('./services/wait.js'),
  work: () => import('./services/work.js'),
  zodEnglish: () => import('zod/v4/locales/en.js'),
}

export type Services = typeof lazy
