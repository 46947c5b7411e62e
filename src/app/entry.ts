import { Context } from '../cli/context.js'
import { plainCall, superviseCall } from '../cli/fast-path.js'
import type { CliIo } from '../cli/io.js'
import { type GlobalOptions, Output } from '../cli/output.js'
import { ExitRequest } from '../errors.js'

/** How a run of the command line ended: the exit status, or the signal to die by (the agent's). */
export interface CliOutcome {
  code: number
  signal?: NodeJS.Signals
}

/**
 * Runs one command line against `io` and says how it ended; main.ts turns that into the process's exit. Global
 * flags are pre-read from argv so that errors thrown before commander has parsed anything still honour --json.
 */
export async function runCli(argv: string[], io: CliIo): Promise<CliOutcome> {
  // Everything after the first `--` belongs to the agent, never to harness's own parser.
  const split = argv.indexOf('--')
  const own = split < 0 ? argv : argv.slice(0, split)
  const passthrough = split < 0 ? [] : argv.slice(split + 1)
  const options: GlobalOptions = {
    json: own.includes('--json'),
    color: !own.includes('--no-color'),
    quiet: own.includes('-q') || own.includes('--quiet'),
  }
  const out = new Output(options, io.stdout, io.stderr, io.env)
  try {
    // HARNESS_NO_FAST_PATH=1 sends every line through commander (the tests compare the two).
    const supervisor = passthrough.length > 0 ? null : superviseCall(own)
    if (supervisor) {
      // A supervisor lives as long as its agent: it loads no command tree (docs/development/design.md).
      const { superviseRun } = await import('../commands/supervise.js')
      await superviseRun(new Context(out, passthrough, io), supervisor.tmuxPlan)
      return { code: 0 }
    }
    const plain = io.env.HARNESS_NO_FAST_PATH === '1' ? null : plainCall(own, passthrough)
    if (plain) {
      // Scripts call these in loops: they need no command tree. The small entry (cli/fast-entry.ts) answers
      // most `session path` lines before this; what it leaves here is a RUNNING session or an error to report.
      out.options.dir = plain.dir
      const ctx = new Context(out, passthrough, io)
      const { printSessionPath, showSession } = (await ctx.services.reading()).read
      await (plain.command === 'path' ? printSessionPath : showSession)(ctx, plain.id)
      return { code: 0 }
    }
    const { buildProgram, CommanderError, fromCommanderError, MissingCommandError } = await import(
      './program.js'
    )
    const program = buildProgram(out, passthrough, io)
    try {
      await program.parseAsync(own, { from: 'user' })
    } catch (error) {
      if (error instanceof CommanderError) {
        const usage = fromCommanderError(error)
        if (!usage) return { code: 0 }
        // Without --json the help that commander printed on stderr is the message.
        if (usage instanceof MissingCommandError && !out.json) return { code: usage.exitCode }
        throw usage
      }
      throw error
    }
    return { code: 0 }
  } catch (error) {
    if (error instanceof ExitRequest && error.signal) return { code: error.exitCode, signal: error.signal }
    return { code: out.error(error) }
  }
}
