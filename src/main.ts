import { type GlobalOptions, Output } from './cli/output.js'

/**
 * The entry point, and the only place that sets process.exitCode. Global flags are pre-read from argv so that
 * errors thrown before commander has parsed anything still honour --json.
 */
async function main(argv: string[]): Promise<number> {
  const options: GlobalOptions = {
    json: argv.includes('--json'),
    color: !argv.includes('--no-color'),
    quiet: argv.includes('-q') || argv.includes('--quiet'),
  }
  const out = new Output(options)
  try {
    const { buildProgram, fromCommanderError } = await import('./cli/program.js')
    const { CommanderError } = await import('commander')
    const program = buildProgram(out)
    try {
      await program.parseAsync(argv, { from: 'user' })
    } catch (error) {
      if (error instanceof CommanderError) {
        const usage = fromCommanderError(error)
        if (usage === 'help-shown') return 2
        if (usage) throw usage
        return 0
      }
      throw error
    }
    return 0
  } catch (error) {
    return out.error(error)
  }
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
