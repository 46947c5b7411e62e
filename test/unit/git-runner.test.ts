import { describe, expect, test } from 'vitest'
import { ExternalToolError } from '../../src/errors.js'
import { git, gitDetail } from '../../src/git/git.js'
import { tmpGitRepo } from '../helpers/tmp.js'

describe('the git runner', () => {
  test('one summary of a failure: the fatal line, else the last line, else the exit code', () => {
    expect(gitDetail({ stderr: 'hint: a\nfatal: bad revision\nhint: b\n', exitCode: 128 })).toBe(
      'bad revision',
    )
    expect(gitDetail({ stderr: 'warning: x\nsomething broke\n', exitCode: 1 })).toBe('something broke')
    expect(gitDetail({ stderr: '', exitCode: 3 })).toBe('exit code 3')
  })

  test('a failed git keeps what failed underneath as the cause, and runs with the environment given', async () => {
    const repo = tmpGitRepo()
    const error = await git(['rev-parse', '--verify', 'no-such-ref'], { cwd: repo.dir, env: repo.env }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ExternalToolError)
    expect((error as ExternalToolError).code).toBe('GIT_FAILED')
    expect((error as Error).cause).toBeInstanceOf(Error)
    const name = await git(['config', 'user.name'], {
      cwd: repo.dir,
      env: {
        ...repo.env,
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'user.name',
        GIT_CONFIG_VALUE_0: 'From Env',
      },
    })
    expect(name.stdout.trim()).toBe('From Env')
  })
})
