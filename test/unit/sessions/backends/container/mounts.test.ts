import { describe, expect, test } from 'vitest'
import {
  containerMounts,
  type MountInput,
  volumeFlag,
} from '../../../../../src/sessions/backends/container/mounts.js'

// The container backend's one table of what is mounted and writable (docs/backends.md, "Mounts"), for every
// mode. A worktree session's start, resume, interactive and --tmux runs all build their container from this
// table alone (createArgs), so one row per kind of session covers every mode; the e2e test checks the same
// table from inside a real container.
const P = '/home/u/proj'
const H = `${P}/.harness`
const ID = 'abc12345'
const agentDir = `${H}/agents/${ID}`

function table(input: MountInput): string[] {
  return containerMounts(input).map((m) => `${m.mode} ${m.path}${m.source ? ` <- ${m.source}` : ''}`)
}

/** The table of a `--no-worktree` session working in `folder` of `checkout`. */
function inCheckout(checkout: MountInput['checkout'], folder: string): string[] {
  return table({ folder, harnessDir: H, agentDir, worktree: null, checkout })
}

describe('what a container sees, and may write', () => {
  test('a worktree session (start, resume, interactive, --tmux)', () => {
    const clone = `${agentDir}/container`
    expect(
      table({
        folder: `${H}/worktrees/${ID}`,
        harnessDir: H,
        agentDir,
        worktree: {
          commonDir: `${P}/.git`,
          cloneFolder: clone,
          gitDir: `${clone}/git`,
          pointerFile: `${clone}/dot-git`,
        },
        checkout: null,
      }),
    ).toEqual([
      `ro ${P}/.git`,
      `rw ${H}/worktrees/${ID}`,
      `rw ${agentDir}`,
      `ro ${clone}`,
      `ro ${H}/worktrees/${ID}/.git <- ${clone}/dot-git`,
      `rw ${clone}/git`,
      `ro ${clone}/git/config`,
      `ro ${clone}/git/hooks`,
    ])
  })

  test('--no-worktree at the top of a checkout: its .git and harness files are read-only, the agent folder writable', () => {
    expect(inCheckout({ dotGit: `${P}/.git`, commonDir: `${P}/.git` }, P)).toEqual([
      `rw ${P}`,
      `ro ${P}/.git`,
      `ro ${H}`,
      `rw ${agentDir}`,
    ])
  })

  test('--no-worktree in a linked checkout: its .git file and its repository are read-only', () => {
    const other = '/home/u/main-repo/.git'
    expect(inCheckout({ dotGit: `${P}/.git`, commonDir: other }, P)).toEqual([
      `rw ${P}`,
      `ro ${P}/.git`,
      `ro ${other}`,
      `ro ${H}`,
      `rw ${agentDir}`,
    ])
  })

  test('--no-worktree in a subfolder of a checkout: the .git above is not mounted at all', () => {
    expect(inCheckout({ dotGit: `${P}/.git`, commonDir: `${P}/.git` }, `${P}/src`)).toEqual([
      `rw ${P}/src`,
      `rw ${agentDir}`,
    ])
  })

  test('outside any repository: the folder and the agent folder; harness files read-only when inside it', () => {
    expect(
      table({
        folder: '/tmp/scratch',
        harnessDir: '/tmp/scratch/.harness',
        agentDir: `/tmp/scratch/.harness/agents/${ID}`,
        worktree: null,
        checkout: null,
      }),
    ).toEqual(['rw /tmp/scratch', 'ro /tmp/scratch/.harness', `rw /tmp/scratch/.harness/agents/${ID}`])
  })

  test('as the engine is given them: the same path inside and out, unless a source masks it', () => {
    expect(volumeFlag({ path: '/a', mode: 'rw', why: '' })).toBe('--volume=/a:/a:rw')
    expect(volumeFlag({ path: '/w/.git', source: '/x/dot-git', mode: 'ro', why: '' })).toBe(
      '--volume=/x/dot-git:/w/.git:ro',
    )
  })
})
