import type { Command, Option } from 'commander'
import { terminalSafeLine } from '../render/safe.js'
import { CliCommand } from './command.js'
import type { OfferedValues } from './options.js'

/** What the shell should do: offer these candidates, or complete file or directory names itself. */
export type Completion = { kind: 'values'; candidates: Candidate[] } | { kind: 'files' | 'dirs' }

import type { Candidate, CompletionSources } from '../sessions/completion.js'

export type { Candidate, CompletionSources }

/**
 * Completes the last of `words` (everything typed after `harness`, the current word last, maybe empty) from the
 * commander tree itself, so that every registered command and flag is offered without a list to keep in sync.
 */
export async function complete(
  program: Command,
  words: string[],
  sources: CompletionSources,
): Promise<Completion> {
  // Every command's flags are offered: they are made now (cli/command.ts makes them when a command parses).
  if (program instanceof CliCommand) program.completeTree()
  const current = words[words.length - 1] ?? ''
  const before = words.slice(0, -1)
  let command = program
  let positionals = 0
  let pendingOption: Option | undefined
  let afterDashDash = false
  for (const word of before) {
    if (pendingOption) {
      pendingOption = undefined
      continue
    }
    if (afterDashDash) continue
    if (word === '--') {
      afterDashDash = true
      continue
    }
    if (word.startsWith('-') && word !== '-') {
      const option = findOption(command, word)
      if (option && takesValue(option) && !word.includes('=')) pendingOption = option
      continue
    }
    const sub = visibleCommands(command).find((c) => c.name() === word || c.aliases().includes(word))
    if (sub && positionals === 0) command = sub
    else positionals++
  }
  if (afterDashDash) return { kind: 'files' }
  if (pendingOption) return filter(await optionValues(pendingOption, sources), current)
  if (current.startsWith('-')) {
    const eq = current.indexOf('=')
    if (eq > 0) {
      const option = findOption(command, current.slice(0, eq))
      if (!option) return values([])
      const prefix = current.slice(0, eq + 1)
      const inner = await optionValues(option, sources)
      if (inner.kind !== 'values') return inner
      return filter(values(inner.candidates.map((c) => ({ ...c, value: prefix + c.value }))), current)
    }
    return filter(values(flagCandidates(command)), current)
  }
  const subs = visibleCommands(command)
  if (subs.length && positionals === 0) {
    return filter(values(subs.map((c) => ({ value: c.name(), description: c.description() }))), current)
  }
  const argument = command.registeredArguments[Math.min(positionals, command.registeredArguments.length - 1)]
  if (!argument || (positionals >= command.registeredArguments.length && !argument.variadic))
    return values([])
  if (argument.argChoices) return filter(values(argument.argChoices.map((value) => ({ value }))), current)
  const name = argument.name()
  if (name === 'id') return filter(values(await sources.sessions()), current)
  // A chain's name, except where a new one is given (`chain create`).
  if (name === 'name' && command.parent?.name() === 'chain' && command.name() !== 'create') {
    return filter(values((await sources.chains?.()) ?? []), current)
  }
  if (name === 'file' || name === 'path') return { kind: 'files' }
  return values([])
}

function values(candidates: Candidate[]): Completion {
  return { kind: 'values', candidates }
}

function filter(completion: Completion, prefix: string): Completion {
  if (completion.kind !== 'values') return completion
  return values(completion.candidates.filter((c) => c.value.startsWith(prefix)))
}

function visibleCommands(command: Command): Command[] {
  return command.commands.filter(
    (c) => !(c as Command & { _hidden?: boolean })._hidden && c.name() !== 'help',
  )
}

/** The command's own options, then those of its parents (commander reads global flags at any level). */
function optionsInScope(command: Command): Option[] {
  const all: Option[] = []
  for (let c: Command | null = command; c; c = c.parent) all.push(...c.options.filter((o) => !o.hidden))
  return all
}

function findOption(command: Command, word: string): Option | undefined {
  const flag = word.split('=')[0]
  return optionsInScope(command).find((o) => o.long === flag || o.short === flag)
}

function takesValue(option: Option): boolean {
  return option.required || option.optional
}

function flagCandidates(command: Command): Candidate[] {
  const seen = new Set<string>()
  const out: Candidate[] = []
  for (const option of [...optionsInScope(command), helpOption(command)]) {
    if (!option?.long || seen.has(option.long)) continue
    seen.add(option.long)
    out.push({ value: option.long, description: option.description })
  }
  return out
}

function helpOption(command: Command): Option | undefined {
  return (command as Command & { _getHelpOption?: () => Option | null })._getHelpOption?.() ?? undefined
}

/** A flag's values as its declaration gives them (cli/options.ts): its choices, or where to find them. */
async function optionValues(option: Option & OfferedValues, sources: CompletionSources): Promise<Completion> {
  const choices = option.offeredChoices ?? option.argChoices
  if (choices) return values(choices.map((value) => ({ value })))
  switch (option.offeredValues) {
    case 'agents':
      return values(await sources.agents())
    case 'sessions':
      return values(await sources.sessions())
    case 'session-ids':
      return values((await sources.sessions()).filter((c) => !c.isName))
    case 'dirs':
      return { kind: 'dirs' }
    default:
      return values([])
  }
}

/** The lines the shell function reads: a directive for files/dirs, else one candidate per line. */
export function renderCompletion(completion: Completion, shell: Shell): string {
  if (completion.kind !== 'values') return `:${completion.kind}\n`
  // Everything printed is escaped like any human output (docs/security.md, "Output"): a foreign record's task
  // with terminal escapes or bidi characters must not retitle the terminal, or reorder the menu, on Tab.
  const lines = completion.candidates.map((raw) => {
    const c = { value: terminalSafeLine(raw.value), description: terminalSafeLine(raw.description ?? '') }
    const description = c.description.replace(/\s+/g, ' ').trim()
    if (shell === 'bash' || !description) return shell === 'zsh' ? c.value.replace(/:/g, '\\:') : c.value
    if (shell === 'zsh') return `${c.value.replace(/:/g, '\\:')}:${description}`
    return `${c.value}\t${description}`
  })
  return lines.length ? `${lines.join('\n')}\n` : ''
}

const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

/**
 * The scripts only forward the words typed so far to `harness __complete` and show what it answers, so that
 * they never go stale as commands are added.
 */
export function completionScript(shell: Shell): string {
  switch (shell) {
    case 'bash':
      return `# harness completion for bash: source <(harness completion bash)
_harness_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" out
  out=$(command harness __complete bash -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
  case "$out" in
    :files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
    :dirs) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
    *) local IFS=$'\\n'; COMPREPLY=($out) ;;
  esac
}
complete -F _harness_complete harness
`
    case 'zsh':
      return `#compdef harness
# harness completion for zsh: source <(harness completion zsh)  (after compinit)
_harness() {
  local out
  local -a candidates
  out=$(command harness __complete zsh -- "\${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
  [[ -n $out ]] || return 1
  case "$out" in
    :files) _files ;;
    :dirs) _files -/ ;;
    *) candidates=("\${(@f)out}"); _describe -t values 'harness' candidates ;;
  esac
}
compdef _harness harness
`
    case 'fish':
      return `# harness completion for fish: harness completion fish | source
function __harness_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    test (count $current) -eq 0; and set current ''
    set -l out (command harness __complete fish -- $words[2..-1] $current 2>/dev/null)
    switch "$out[1]"
        case :files
            __fish_complete_path (commandline -ct)
        case :dirs
            __fish_complete_directories (commandline -ct)
        case '*'
            printf '%s\\n' $out
    end
end
complete -c harness -f -a '(__harness_complete)'
`
  }
}
