import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { resolveProvider } from '../../src/providers/args.js'
import { flagsMissingFromHelp } from '../../src/providers/help.js'
import { isolatedEnv, tmpDir } from '../helpers/tmp.js'
import { cliTest, useInstalledClis } from './drive.js'

/**
 * Every flag harness may pass (any mode, level, start or resume) is in the installed CLI's own help: what
 * `harness doctor` checks. opencode's parser ignores unknown flags rather than refusing them, so for it this is
 * the only evidence that a flag exists. (What the flags do is measured in the per-CLI files beside this one.)
 */
useInstalledClis('CLIs (help)')

function helpOf(command: string, args: string[]): Promise<string> {
  // A HOME of its own: some CLIs write their settings folder on any start.
  const home = tmpDir()
  const env = { ...isolatedEnv(home), CODEX_HOME: join(home, '.codex'), XDG_DATA_HOME: join(home, 'data') }
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (_error, stdout, stderr) =>
      resolve(`${stdout}${stderr}`),
    )
  })
}

describe('the real CLIs document every flag harness passes', () => {
  for (const name of ['claude', 'codex', 'gemini', 'opencode', 'pi-agent']) {
    cliTest(name, async (bin) => {
      const provider = resolveProvider(name)
      const command = join(bin, provider.command as string)
      const helps = await Promise.all(provider.help_args.map((args) => helpOf(command, args)))
      expect(flagsMissingFromHelp(provider, helps.join('\n'))).toEqual([])
    })
  }
})
