import { Command, type CommanderError } from 'commander'
import { registerRun } from '../commands/run.js'
import { registerCleanup } from '../commands/session/cleanup.js'
import { registerDelete } from '../commands/session/delete.js'
import { registerDiff } from '../commands/session/diff.js'
import { registerList } from '../commands/session/list.js'
import { registerLogs } from '../commands/session/logs.js'
import { registerPath } from '../commands/session/path.js'
import { registerPrune } from '../commands/session/prune.js'
import { registerRecover } from '../commands/session/recover.js'
import { registerResume } from '../commands/session/resume.js'
import { registerShow } from '../commands/session/show.js'
import { registerStop } from '../commands/session/stop.js'
import { registerWait } from '../commands/session/wait.js'
import { registerSupervise } from '../commands/supervise.js'
import { UsageError } from '../errors.js'
import { Context } from './context.js'
import type { GlobalOptions, Output } from './output.js'

declare const HARNESS_VERSION: string
export const VERSION = typeof HARNESS_VERSION === 'string' ? HARNESS_VERSION : '0.0.0-dev'

/** Builds the whole command tree. Commands register themselves; none holds logic. */
export function buildProgram(out: Output, passthrough: string[] = []): Command {
  const ctx = new Context(out, passthrough)
  const program = new Command('harness')
    .description('run AI coding agents as sessions: one worktree, one branch, one record each')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .option('--dir <path>', 'the project (or its .harness folder); default: found from the current directory')
    .option('--json', 'machine-readable output: exactly one JSON document on stdout')
    .option('--no-color', 'no colours (NO_COLOR works too)')
    .option('-q, --quiet', 'fewer diagnostics on stderr')
    .addHelpCommand('help [command]', 'show help for a command')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .exitOverride()
    .configureOutput({
      // Errors are rendered by main.ts (text or JSON) with the right exit code.
      outputError: () => {},
      writeOut: (text) => out.writeOut(text),
      writeErr: (text) => process.stderr.write(text),
    })
  program.hook('preAction', (_root, leaf) => {
    if (passthrough.length && leaf.name() !== 'run') {
      throw new UsageError('arguments after -- are only for "harness run"')
    }
    const globals = leaf.optsWithGlobals() as Partial<GlobalOptions>
    Object.assign(out.options, {
      dir: globals.dir,
      json: globals.json === true,
      color: globals.color !== false,
      quiet: globals.quiet === true,
    })
  })

  const session = program
    .command('session')
    .description('list, inspect, locate, stop, resume, recover and clean up sessions')
    .addHelpCommand(false)
  registerRun(program, ctx)
  registerList(session, ctx)
  registerShow(session, ctx)
  registerPath(session, ctx)
  registerResume(session, ctx)
  registerStop(session, ctx, 'kill')
  registerStop(session, ctx, 'pause')
  registerWait(session, ctx)
  registerLogs(session, ctx)
  registerRecover(session, ctx)
  registerDiff(session, ctx)
  registerCleanup(session, ctx)
  registerDelete(session, ctx)
  registerPrune(session, ctx)
  registerSupervise(program)
  return program
}

/**
 * Turns commander's own errors into ours: asked-for help and version succeed (null); help shown because a
 * subcommand is missing, and every parse error, are usage errors (exit 2).
 */
export function fromCommanderError(error: CommanderError): UsageError | 'help-shown' | null {
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return null
  if (error.code === 'commander.help') return 'help-shown'
  const message = error.message.replace(/^error: /, '')
  const hint =
    error.code === 'commander.unknownCommand'
      ? 'run "harness --help" for the commands'
      : 'run with --help for usage'
  return new UsageError(message, hint)
}
