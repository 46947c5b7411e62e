import { execFile } from 'node:child_process'
import { agentEnvironment } from './supervisor.js'

/**
 * Asks an agent's CLI a question that is not a run (opencode's `session list`): its output, or null when it
 * could not start, failed, or took longer than `timeoutMs`. Never throws: what it learns is a bonus. It runs
 * in the agent's own environment (`PWD` the folder, as opencode reads its project from it).
 */
export function queryAgentCli(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: agentEnvironment(options.env, options.cwd),
        timeout: options.timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout) => resolve(error ? null : String(stdout)),
    )
  })
}
