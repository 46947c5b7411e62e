import { ExternalToolError } from '../errors.js'

/** Runs the project's `worktree.setup` in a new worktree before the agent starts; its failure fails the run. */
export async function runSetupCommand(
  setup: { command: string; args: string[] },
  cwd: string,
  signal: AbortSignal,
): Promise<void> {
  const { execa } = await import('execa')
  const { command, args } = setup
  const result = await execa(command, args, {
    cwd,
    reject: false,
    all: true,
    stdin: 'ignore',
    cancelSignal: signal,
    stripFinalNewline: true,
  })
  if (result.failed) {
    const output = (result.all ?? '').toString().trim()
    const tail = output.split('\n').slice(-20).join('\n')
    throw new ExternalToolError(
      `worktree setup failed (${result.exitCode !== undefined ? `exit ${result.exitCode}` : (result.signal ?? 'could not start')}): ${[command, ...args].join(' ')}${tail ? `\n${tail}` : ''}`,
      'fix "worktree.setup" in .harness/config.json',
      'SETUP_FAILED',
    )
  }
}
