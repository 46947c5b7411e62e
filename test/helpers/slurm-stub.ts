import type { SlurmExec, SlurmResult, SlurmTool } from '../../src/sessions/backends/slurm/tools.js'

/** One call the stub saw. */
export interface SlurmCall {
  tool: SlurmTool
  args: string[]
  options?: Parameters<SlurmExec>[2]
}

type Answer =
  | Partial<SlurmResult>
  | ((args: string[]) => Partial<SlurmResult> | Promise<Partial<SlurmResult>>)

/**
 * The Slurm module's one seam, stubbed (as gh stubs its commands): each tool answers from `answers` (canned
 * output, or a function of the argv), and every call is kept to be checked. A tool with no answer fails the test.
 */
export function stubSlurm(answers: Partial<Record<SlurmTool, Answer>>): {
  exec: SlurmExec
  calls: SlurmCall[]
} {
  const calls: SlurmCall[] = []
  const exec: SlurmExec = async (tool, args, options) => {
    calls.push({ tool, args, ...(options ? { options } : {}) })
    const answer = answers[tool]
    if (!answer) throw new Error(`unexpected ${tool} ${args.join(' ')}`)
    const result = typeof answer === 'function' ? await answer(args) : answer
    return { stdout: '', stderr: '', exitCode: 0, ...result }
  }
  return { exec, calls }
}
