import { execFile } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The real agent CLIs, pinned: the versions docs/providers.md's table was measured with. They install from npm
 * once into `node_modules/.cache/harness-real-clis/<key>/` (a fresh clone installs them once per CI run; every
 * file of the suite shares the one install).
 */
export const CLI_PACKAGES = {
  claude: '@anthropic-ai/claude-code@2.1.332',
  codex: '@openai/codex@0.171.0',
  gemini: '@google/gemini-cli@0.61.0',
  opencode: 'opencode-ai@1.18.33',
  pi: '@mariozechner/pi-coding-agent@0.73.1',
} as const

const ROOT = fileURLToPath(new URL('../../node_modules/.cache/harness-real-clis/', import.meta.url))
const KEY = `v1-${Object.values(CLI_PACKAGES)
  .map((p) => p.replace(/[@/]/g, '_'))
  .join('-')}`.slice(0, 200)

let pending: Promise<{ bin?: string; reason?: string }> | undefined

/** The folder of the CLIs' binaries, or the reason npm could not install them (the suite then skips). */
export function installClis(): Promise<{ bin?: string; reason?: string }> {
  pending ??= install()
  return pending
}

async function install(): Promise<{ bin?: string; reason?: string }> {
  const prefix = process.env.HARNESS_REAL_CLIS_DIR || join(ROOT, KEY)
  const bin = join(prefix, 'node_modules', '.bin')
  const names = Object.keys(CLI_PACKAGES)
  if (names.every((name) => existsSync(join(bin, name)))) return { bin }
  mkdirSync(prefix, { recursive: true })
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '-E', ...Object.values(CLI_PACKAGES)],
      { timeout: 480_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error)
          resolve({
            reason: `npm could not install the CLIs: ${`${stdout}${stderr}`.trim().split('\n').at(-1)}`,
          })
        else resolve({ bin })
      },
    )
  })
}
