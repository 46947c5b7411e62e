import { type Argument, type Command, CommanderError } from 'commander'
import { commandPath } from '../cli/action.js'
import { CliCommand } from '../cli/command.js'
import { Context } from '../cli/context.js'
import type { CliIo } from '../cli/io.js'
import type { Services } from '../cli/lazy.js'
import { boolFlag, negatedFlag, textFlag } from '../cli/options.js'
import type { GlobalOptions, Output } from '../cli/output.js'
import { registerAutoCleanup } from '../commands/auto-cleanup.js'
import { registerChain } from '../commands/chain.js'
import { registerCompletion } from '../commands/completion.js'
import { registerConfig } from '../commands/config.js'
import { registerDoctor } from '../commands/doctor.js'
import { registerRun } from '../commands/run.js'
import { registerAdopt } from '../commands/session/adopt.js'
import { registerArchive, registerUnarchive } from '../commands/session/archive.js'
import { registerAttach } from '../commands/session/attach.js'
import { registerCheckpoint, registerCheckpoints, registerRestore } from '../commands/session/checkpoint.js'
import { registerCleanup } from '../commands/session/cleanup.js'
import { registerCollect } from '../commands/session/collect.js'
import { registerDelete } from '../commands/session/delete.js'
import { registerDiff } from '../commands/session/diff.js'
import { registerExport } from '../commands/session/export.js'
import { registerList } from '../commands/session/list.js'
import { registerLogs } from '../commands/session/logs.js'
import { registerMerge } from '../commands/session/merge.js'
import { registerPath } from '../commands/session/path.js'
import { registerPrune } from '../commands/session/prune.js'
import { registerRecover } from '../commands/session/recover.js'
import { registerResume } from '../commands/session/resume.js'
import { registerSend } from '../commands/session/send.js'
import { registerShow } from '../commands/session/show.js'
import { registerStats } from '../commands/session/stats.js'
import { registerStop } from '../commands/session/stop.js'
import { registerWait } from '../commands/session/wait.js'
import { registerShellInit } from '../commands/shell-init.js'
import { registerSupervise } from '../commands/supervise.js'
import { registerTrust } from '../commands/trust.js'
import { registerUi } from '../commands/ui.js'
import { ExitRequest, UsageError } from '../errors.js'

// The entry (app/entry.ts) loads commander with this module, through its one import of it.
export { CommanderError }

declare const HARNESS_VERSION: string
export const VERSION = typeof HARNESS_VERSION === 'string' ? HARNESS_VERSION : '0.0.0-dev'

/** The flags every command takes (commander reads them at any level). */
const GLOBAL_FLAGS = {
  version: boolFlag('-V, --version', 'print the version'),
  dir: textFlag(
    '--dir <path>',
    'the project (or its .harness folder); default: found from the current directory',
    {
      values: 'dirs',
    },
  ),
  json: boolFlag('--json', 'machine-readable output: exactly one JSON document on stdout'),
  color: negatedFlag('--no-color', 'no colours (NO_COLOR works too)'),
  quiet: boolFlag('-q, --quiet', 'fewer diagnostics on stderr'),
}

/**
 * Builds the whole command tree. Commands register themselves; none holds logic. `services` stands in for
 * the services the actions call, in a test of the commands' flags (cli/context.ts).
 */
export function buildProgram(out: Output, passthrough: string[], io: CliIo, services?: Services): CliCommand {
  const ctx = new Context(out, passthrough, io, services)
  const program = rootCommand(out)
  readGlobalsBeforeEachAction(program, out, passthrough)
  const session = sessionCommand(program)
  registerRun(program, ctx)
  registerUi(program, ctx)
  registerTrust(program, ctx)
  registerSessionCommands(session, ctx)
  registerChain(program, ctx)
  registerConfig(program, ctx)
  registerDoctor(program, ctx)
  registerCompletion(program, ctx)
  registerShellInit(program, ctx)
  registerHelp(session)
  registerHelp(program)
  registerSupervise(program, ctx)
  registerAutoCleanup(program, ctx)
  tagErrors(program)
  return program
}

/** `harness` itself: its global flags, its help's layout, and output through `out`. */
function rootCommand(out: Output): CliCommand {
  const program = new CliCommand('harness')
    .description('run AI coding agents as sessions: one worktree, one branch, one record each')
    .flags(GLOBAL_FLAGS)
    .helpOption('-h, --help', 'show help')
    .addHelpCommand(false)
    .addHelpText(
      'after',
      `
Examples:
  harness run -a claude "add auth endpoints"
  harness session list
  harness help session`,
    )
    .configureHelp({
      showGlobalOptions: true,
      sortSubcommands: false,
      // "resume|continue <id> [prompt...]" without " [options]": a narrower first column lets the
      // descriptions wrap to the terminal instead of running past it.
      subcommandTerm: (cmd) =>
        [
          [cmd.name(), ...cmd.aliases().slice(0, 1)].join('|'),
          ...cmd.registeredArguments.map(argumentTerm),
        ].join(' '),
    })
    .configureOutput({
      // Errors are rendered by app/entry.ts (Output.error: text or JSON) with the right exit code.
      outputError: () => {},
      writeOut: (text) => out.writeOut(text),
      // Only help shown for a missing command comes here; under --json that becomes one JSON error instead.
      writeErr: (text) => {
        if (!out.json) out.stderr.write(text)
      },
      // Help wraps to the terminal harness writes to (commander would look at process.stdout itself), else
      // at commander's own 80 columns.
      getOutHelpWidth: () => (out.stdout.isTTY && out.stdout.columns) || 80,
      getErrHelpWidth: () => (out.stderr.isTTY && out.stderr.columns) || 80,
    })
  program.on('option:version', () => {
    out.result({ version: VERSION }, (data) => data.version)
    throw new ExitRequest(0)
  })
  return program
}

/** Before any action: refuse stray `--` arguments, and put the global flags where output reads them. */
function readGlobalsBeforeEachAction(program: Command, out: Output, passthrough: string[]): void {
  program.hook('preAction', (_root, leaf) => {
    const takesPassthrough = ['run', 'add', 'send', '__complete'].includes(leaf.name())
    if (passthrough.length && !takesPassthrough) {
      throw new UsageError(
        'arguments after -- are only for "harness run", "harness chain add" and "harness session send"',
      )
    }
    const globals = leaf.optsWithGlobals() as Partial<GlobalOptions>
    Object.assign(out.options, {
      dir: globals.dir,
      json: globals.json === true,
      color: globals.color !== false,
      quiet: globals.quiet === true,
    })
  })
}

function sessionCommand(program: CliCommand): CliCommand {
  return program
    .command('session')
    .description('list, inspect, locate, stop, resume, recover and clean up sessions')
    .addHelpCommand(false)
    .addHelpText(
      'after',
      `
Examples:
  harness session list
  hcd 3f9a                                  # after: eval "$(harness shell-init bash)"
  p=$(harness session path 3f9a) && cd "$p"`,
    )
}

/** Under `harness session`, in the order its help lists them. */
function registerSessionCommands(session: CliCommand, ctx: Context): void {
  registerList(session, ctx)
  registerShow(session, ctx)
  registerPath(session, ctx)
  registerResume(session, ctx)
  registerAttach(session, ctx)
  registerSend(session, ctx)
  registerStop(session, ctx, 'kill')
  registerStop(session, ctx, 'pause')
  registerWait(session, ctx)
  registerLogs(session, ctx)
  registerStats(session, ctx)
  registerExport(session, ctx)
  registerArchive(session, ctx)
  registerUnarchive(session, ctx)
  registerRecover(session, ctx)
  registerCollect(session, ctx)
  registerAdopt(session, ctx)
  registerDiff(session, ctx)
  registerCheckpoint(session, ctx)
  registerCheckpoints(session, ctx)
  registerRestore(session, ctx)
  registerMerge(session, ctx)
  registerCleanup(session, ctx)
  registerDelete(session, ctx)
  registerPrune(session, ctx)
}

/** `harness help [command...]` and `harness session help [command]`: help on stdout, exit 0. */
function registerHelp(parent: Command): void {
  parent
    .command('help [command...]')
    .description('show help for a command')
    .addHelpText(
      'after',
      `\nExample:\n  ${commandPath(parent)} help ${parent.parent ? 'list' : 'session list'}`,
    )
    .action((words: string[]) => {
      let target = parent
      for (const word of words) {
        const next = target.commands.find((c) => c.name() === word || c.aliases().includes(word))
        if (!next) {
          throw new UsageError(
            `unknown command '${word}'`,
            `run "${commandPath(target)} --help" for the commands`,
          )
        }
        target = next
      }
      target.outputHelp()
    })
}

/** Parse errors carry the command that raised them, so that hints name it ("harness session list --help"). */
function tagErrors(command: Command): void {
  command.exitOverride((error) => {
    throw Object.assign(error, { command })
  })
  for (const sub of command.commands) tagErrors(sub)
}

function argumentTerm(argument: Argument): string {
  const name = `${argument.name()}${argument.variadic ? '...' : ''}`
  return argument.required ? `<${name}>` : `[${name}]`
}

/** A command that needs a subcommand got none: its help is already on stderr (unless --json). */
export class MissingCommandError extends UsageError {
  constructor(path: string) {
    super(`missing command: ${path} <command>`, `run "${path} --help" for the commands`)
  }
}

/**
 * Turns commander's own errors into ours: asked-for help succeeds (null); help shown because a subcommand is
 * missing, and every parse error, are usage errors (exit 2). Commander's "(Did you mean …?)" line becomes
 * part of the hint, so that the error itself stays one line.
 */
export function fromCommanderError(error: CommanderError): UsageError | null {
  const command = (error as CommanderError & { command?: Command }).command
  const path = command ? commandPath(command) : 'harness'
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return null
  if (error.code === 'commander.help') return error.exitCode === 0 ? null : new MissingCommandError(path)
  const [first = '', ...rest] = error.message.replace(/^error: /, '').split('\n')
  const suggestion = rest
    .join(' ')
    .trim()
    .replace(/^\((.*)\)$/, '$1')
  let hint =
    error.code === 'commander.unknownCommand'
      ? `run "${path} --help" for the commands`
      : `run "${path} --help" for usage`
  if (
    error.code === 'commander.unknownOption' &&
    (command?.name() === 'run' || command?.name() === 'resume')
  ) {
    hint = `a prompt that begins with "-" is given as --prompt="-…"; ${hint}`
  }
  const prefixOf = error.code === 'commander.unknownOption' && command ? longOptionFor(command, first) : null
  if (prefixOf) hint = `did you mean ${prefixOf}? (${hint})`
  else if (suggestion) hint = `${suggestion.charAt(0).toLowerCase()}${suggestion.slice(1)} (${hint})`
  const sessionCommand =
    error.code === 'commander.unknownCommand' && command ? asSessionCommand(command, first) : null
  if (sessionCommand) hint = `did you mean "harness session ${sessionCommand}"?`
  const topLevel =
    error.code === 'commander.unknownCommand' && command ? asTopLevelCommand(command, first) : null
  if (topLevel) hint = `did you mean "harness ${topLevel}"? (run "harness ${topLevel} --help")`
  return new UsageError(first, hint)
}

/** `harness session chain …` (or `config`, `doctor`…): a top-level command typed under `session`. */
function asTopLevelCommand(command: Command, message: string): string | null {
  const root = command.parent
  if (!root || root.parent) return null
  const word = /unknown command '([^']*)'/.exec(message)?.[1]
  const known = root.commands.find(
    (c) =>
      (c.name() === word || c.aliases().includes(word ?? '')) &&
      !(c as Command & { _hidden?: boolean })._hidden,
  )
  return known && known.name() !== 'help' && known !== command ? known.name() : null
}

/**
 * The one long option of `command` (its own or a global one) that the unknown `--flag` begins, such as
 * `--session-id` for `run --session`: a truer guess than commander's nearest spelling (`--version`).
 */
function longOptionFor(command: Command, message: string): string | null {
  const flag = /unknown option '(--[^'=]+)/.exec(message)?.[1]
  if (!flag) return null
  const longs = new Set<string>()
  for (let c: Command | null = command; c; c = c.parent) {
    for (const option of c.options) if (option.long && !option.hidden) longs.add(option.long)
  }
  const matches = [...longs].filter((long) => long.startsWith(`${flag}-`))
  return matches.length === 1 ? (matches[0] as string) : null
}

/**
 * `harness ls` (or `ps`): the session commands live under `session`, and one way to say each thing keeps the
 * top level small, so the hint points there instead of an alias doing it.
 */
function asSessionCommand(command: Command, message: string): string | null {
  if (command.parent) return null
  const word = /unknown command '([^']*)'/.exec(message)?.[1]
  if (!word) return null
  if (word === 'ps') return 'list'
  const session = command.commands.find((c) => c.name() === 'session')
  const known = session?.commands.some((c) => c.name() === word || c.aliases().includes(word))
  return known && word !== 'help' ? word : null
}
