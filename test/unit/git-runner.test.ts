import { describe, expect, test } from 'vitest'
import { ExternalToolError } from '../../src/errors.js'
import { gitAt, gitDetail } from '../../src/git/git.js'
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
    const error = await gitAt(repo.dir, { env: repo.env })
      .run(['rev-parse', '--verify', 'no-such-ref'])
      .then(
        () => null,
        (e: unknown) => e,
      )
    expect(error).toBeInstanceOf(ExternalToolError)
    expect((error as ExternalToolError).code).toBe('GIT_FAILED')
    expect((error as Error).cause).toBeInstanceOf(Error)
    const env = {
      ...repo.env,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'user.name',
      GIT_CONFIG_VALUE_0: 'From Env',
    }
    expect(await gitAt(repo.dir, { env }).text(['config', 'user.name'])).toBe('From Env')
  })
})
