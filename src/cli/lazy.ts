// The lazy command registry (npm's lib/npm.js pattern): the one place where the CLI decides what loads when a
// command runs rather than at start. Building the command tree loads each command's declaration (its flags
// and help); its action loads one entry here: the group of services and renderers that it shares with a few
// commands (cli/services/), so that a command pays only for its group, and a reading command (list, show,
// path, logs, wait, stats) never loads an acting one (test/unit/layers.test.ts). Below an entry, modules import
// each other statically. Apart from the groups: what a Context itself loads (records, config, stop,
// chainsStore; the plain show loads no zod), `list --all-projects`, and zod's English messages. The native
// build makes each entry a chunk; the few other lazy imports are listed in docs/development/native.md.
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
