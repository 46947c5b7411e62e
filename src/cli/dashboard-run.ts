import { BACKEND_NAMES } from '../backend-names.js'
import { listProviders } from '../providers/args.js'
import type { DashboardTerminal, runDashboard } from '../ui/dashboard.js'
import type { Context } from './context.js'
import { CliDashboard } from './dashboard.js'

/**
 * `harness ui`: finds the project, loads the dashboard's chunk (Ink and React, which no other command loads) and
 * gives it the terminal until the user quits.
 */
export async function openDashboard(ctx: Context, options: { allProjects: boolean }): Promise<void> {
  const port = new CliDashboard({
    io: { cwd: ctx.cwd, env: ctx.env, stdin: ctx.stdin, stdinIsTerminal: () => ctx.stdinIsTerminal },
    out: ctx.out,
    allProjects: options.allProjects,
    agents: await agentNames(ctx),
    backends: [...BACKEND_NAMES],
  })
  // A project error (no repository, an unsafe .harness) ends `ui` before the screen, as any command's would.
  await port.open()
  const { runDashboard } = await loadDashboard(ctx.env)
  await runDashboard(port, terminalOf(ctx))
}

/** The agents `n` offers: the built-in ones and the configured ones (an unreadable config: the built-in ones). */
async function agentNames(ctx: Context): Promise<string[]> {
  let config = {}
  try {
    config = await ctx.config()
  } catch {}
  return listProviders(config).map((p) => p.name)
}

/**
 * Loads the dashboard's chunk. Ink decides when it loads whether it runs in CI (the variables CI and
 * CONTINUOUS_INTEGRATION, through is-in-ci) and then draws nothing until it exits, and it loads React's
 * developer tools when DEV=true: neither fits a dashboard on a terminal, so those variables are hidden from
 * it while it loads (the environment agents get is left as it was).
 */
async function loadDashboard(env: NodeJS.ProcessEnv): Promise<{ runDashboard: typeof runDashboard }> {
  const hidden = ['CI', 'CONTINUOUS_INTEGRATION', 'DEV'].filter((name) => name in env)
  const saved = hidden.map((name) => [name, env[name]] as const)
  for (const name of hidden) delete env[name]
  try {
    return await (await import('../ui/dashboard.js')).loaded()
  } finally {
    for (const [name, value] of saved) env[name] = value
  }
}

/** The terminal, and the signals that end the dashboard as q does (a closed terminal, a kill). */
function terminalOf(ctx: Context): DashboardTerminal {
  return {
    stdin: ctx.stdin as NodeJS.ReadStream,
    stdout: ctx.out.stdout as NodeJS.WriteStream,
    stderr: ctx.out.stderr as NodeJS.WriteStream,
    onStop(stop) {
      const signals = ['SIGTERM', 'SIGHUP', 'SIGINT'] as const
      for (const signal of signals) process.on(signal, stop)
      return () => {
        for (const signal of signals) process.removeListener(signal, stop)
      }
    },
  }
}
