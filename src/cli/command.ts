import { Command, Option } from 'commander'
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

/** commander's Command that takes a `Flags` table; its subcommands are of the same kind. */
export class CliCommand extends Command {
  override createCommand(name?: string): CliCommand {
    return new CliCommand(name)
  }

  /** Adds every declared flag, in the table's order (the order help lists them in). */
  flags(flags: Flags): this {
    for (const [key, flag] of Object.entries(flags)) this.addOption(commanderOption(key, flag))
    return this
  }
}
