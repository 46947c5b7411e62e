import { Command, type HelpContext, Option, type ParseOptions } from 'commander'
import { collect, type Flag, type Flags, type OfferedValues } from './options.js'

/** commander's option for one declaration, carrying what completion offers. */
export function commanderOption(key: string, flag: Flag): Option & OfferedValues {
  const option: Option & OfferedValues = new Option(flag.flags, flag.description)
  if (option.attributeName() !== key) {
    throw new Error(
      `flag ${flag.flags} is declared as "${key}"; commander names it "${option.attributeName()}"`,
    )
  }
  if (flag.default !== undefined) option.default(flag.default)
  if (flag.required) option.makeOptionMandatory()
  if (flag.repeatable) option.argParser(collect)
  if (flag.choices && flag.commanderChecks) option.choices(flag.choices)
  option.offeredChoices = flag.choices
  option.offeredValues = flag.values
  return option
}

/**
 * commander's Command that takes a `Flags` table; its subcommands are of the same kind. A command's flags become
 * commander options when the command is about to parse or show its help (`complete`), not when the tree is
 * built: every run builds the whole tree and uses one command of it, and making every option cost each start
 * about 8 ms in the native executable (docs/development/native.md, "Start-up"). The help listing of a group
 * does not show its subcommands' options (program.ts's `subcommandTerm`), so a command not completed looks
 * the same there.
 */
export class CliCommand extends Command {
  private declared: Flags[] = []

  constructor(name?: string) {
    super(name)
    // commander dispatches to a subcommand before that subcommand reads its arguments.
    this.hook('preSubcommand', (_self, sub) => {
      if (sub instanceof CliCommand) sub.complete()
    })
  }

  override createCommand(name?: string): CliCommand {
    return new CliCommand(name)
  }

  /** Declares every flag of the table, in its order (the order help lists them in); see `complete`. */
  flags(flags: Flags): this {
    this.declared.push(flags)
    return this
  }

  /** Makes the declared flags commander's options now: the command parses or shows its help next. */
  complete(): this {
    for (const flags of this.declared.splice(0)) {
      for (const [key, flag] of Object.entries(flags)) this.addOption(commanderOption(key, flag))
    }
    return this
  }

  override parse(argv?: readonly string[], options?: ParseOptions): this {
    return this.complete() && super.parse(argv, options)
  }

  override parseAsync(argv?: readonly string[], options?: ParseOptions): Promise<this> {
    return this.complete() && super.parseAsync(argv, options)
  }

  override helpInformation(context?: HelpContext): string {
    return this.complete() && super.helpInformation(context)
  }

  /** Completes this command and every command under it (shell completion walks the whole tree). */
  completeTree(): this {
    this.complete()
    for (const sub of this.commands) if (sub instanceof CliCommand) sub.completeTree()
    return this
  }
}
