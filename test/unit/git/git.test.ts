import { describe, expect, test } from 'vitest'
import { ExternalToolError } from '../../../src/errors.js'
import { gitAt, gitDetail } from '../../../src/git/git.js'
import { tmpGitRepo } from '../../helpers/tmp.js'

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

describe('Git, bound to a directory and an environment', () => {
  test('check answers yes/no by exit 0/1; anything else is the one GIT_FAILED error naming the subcommand', async () => {
    const repo = tmpGitRepo()
    const git = gitAt(repo.dir, { env: repo.env })
    expect(await git.check(['show-ref', '--verify', '--quiet', 'refs/heads/main'])).toBe(true)
    expect(await git.check(['show-ref', '--verify', '--quiet', 'refs/heads/none'])).toBe(false)
    const error = await git.check(['-c', 'core.x=1', 'merge-base', '--is-ancestor', 'nope', 'HEAD']).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ExternalToolError)
    expect((error as Error).message).toMatch(/^git merge-base failed: Not a valid object name nope$/)
  })

  test("git's location variables in the given environment are ignored; with() adds its own after them", async () => {
    const repo = tmpGitRepo()
    const other = tmpGitRepo()
    const env = { ...repo.env, GIT_DIR: `${other.dir}/.git`, GIT_INDEX_FILE: '/nonexistent/index' }
    const git = gitAt(repo.dir, { env })
    expect(await git.text(['rev-parse', '--show-toplevel'])).toBe(repo.dir)
    expect(await git.fields(['ls-files', '-z'])).toEqual(
      await gitAt(repo.dir, repo).fields(['ls-files', '-z']),
    )
    // A temporary index given through with() is used: an empty one lists nothing.
    const empty = git.with({ GIT_INDEX_FILE: `${repo.dir}/.git/empty-index` })
    await empty.run(['read-tree', '--empty'])
    expect(await empty.lines(['ls-files'])).toEqual([])
    expect(await git.at(other.dir).text(['rev-parse', '--show-toplevel'])).toBe(other.dir)
  })
})
