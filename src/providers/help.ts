import { providerTokens, type ResolvedProvider } from './args.js'

/**
 * The flags harness would pass to this provider (any mode, level, start or resume) that its help text does
 * not mention: a sign that the installed CLI differs from the one the table was written for (docs/providers.md).
 * `helpText` is the output of every argv in `provider.help_args` joined (codex and opencode document some
 * flags only in a subcommand's help). Pure: the caller runs the CLI.
 */
export function flagsMissingFromHelp(provider: ResolvedProvider, helpText: string): string[] {
  return providerFlags(provider).filter((flag) => !mentions(helpText, flag))
}

/** The distinct flags in a provider's argv, without values (`--message={prompt}` → `--message`). */
export function providerFlags(provider: ResolvedProvider): string[] {
  const flags = providerTokens(provider)
    .filter((token) => /^--?[A-Za-z]/.test(token))
    .map((token) => token.split('=')[0] ?? token)
  return [...new Set(flags)]
}

function mentions(helpText: string, flag: string): boolean {
  const escaped = flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  // A flag as a help line writes it: after a space, comma or bracket, and not the prefix of a longer flag.
  return new RegExp(`(^|[\\s,\\[(|])${escaped}(?![A-Za-z0-9-])`, 'm').test(helpText)
}
