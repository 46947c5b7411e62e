import { chmodSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { HarnessError } from '../../../src/errors.js'
import { copyIncludedFiles } from '../../../src/git/include.js'
import { createWorktree } from '../../../src/git/worktree.js'
import { tmpDir, tmpGitRepo } from '../../helpers/tmp.js'

async function setup() {
  const repo = tmpGitRepo()
  repo.write('.gitignore', '.env\n*.local.json\nnode_modules/\n')
  repo.write('config/app.json', '{"tracked":true}\n')
  repo.write('config/tracked.local.json', '{"tracked":"forced"}\n')
  repo.git('add', '-A')
  repo.git('add', '-f', 'config/tracked.local.json')
  repo.git('commit', '-q', '-m', 'config')
  repo.write('.env', 'SECRET=1\n')
  chmodSync(join(repo.dir, '.env'), 0o600)
  repo.write('config/dev.local.json', '{"dev":true}\n')
  repo.write('config/my settings.local.json', '{"spaces":true}\n')
  repo.write('config/nested/deep.local.json', '{"deep":true}\n')
  repo.write('packages/api/.env', 'API=1\n')
  repo.write('notes.txt', 'untracked, not ignored\n')
  repo.write('node_modules/pkg/.env', 'should not match a top-level pattern\n')
  const path = join(tmpDir(), 'new wt')
  await createWorktree({ repoDir: repo.dir, path, branch: 'harness/inc', base: 'HEAD', env: repo.env })
  return { repo, path }
}

describe('copyIncludedFiles', () => {
  test('copies untracked files, ignored or not, matching the globs', async () => {
    const { repo, path } = await setup()
    const result = await copyIncludedFiles(repo.dir, path, ['.env', 'config/*.local.json', 'notes.txt'], {
      env: repo.env,
    })
    expect(result).toEqual({
      copied: ['.env', 'config/dev.local.json', 'config/my settings.local.json', 'notes.txt'],
      skipped: [],
    })
    expect(readFileSync(join(path, '.env'), 'utf8')).toBe('SECRET=1\n')
    expect(statSync(join(path, '.env')).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(path, 'config/my settings.local.json'), 'utf8')).toBe('{"spaces":true}\n')
    // `*` stays in one directory; tracked files are the worktree's own.
    expect(existsSync(join(path, 'config/nested/deep.local.json'))).toBe(false)
    expect(readFileSync(join(path, 'config/tracked.local.json'), 'utf8')).toBe('{"tracked":"forced"}\n')
  })

  test('"**" crosses directories', async () => {
    const { repo, path } = await setup()
    const result = await copyIncludedFiles(repo.dir, path, ['**/.env', 'config/**/*.local.json'], {
      env: repo.env,
    })
    expect(result.copied).toEqual([
      '.env',
      'config/dev.local.json',
      'config/my settings.local.json',
      'config/nested/deep.local.json',
      'node_modules/pkg/.env',
      'packages/api/.env',
    ])
    expect(readFileSync(join(path, 'packages/api/.env'), 'utf8')).toBe('API=1\n')
  })

  test('never overwrites what the worktree already has', async () => {
    const { repo, path } = await setup()
    writeFileSync(join(path, '.env'), 'WORKTREE=own\n')
    const result = await copyIncludedFiles(repo.dir, path, ['.env', 'config/dev.local.json'], {
      env: repo.env,
    })
    expect(result).toEqual({ copied: ['config/dev.local.json'], skipped: ['.env'] })
    expect(readFileSync(join(path, '.env'), 'utf8')).toBe('WORKTREE=own\n')
  })

  test('does not write through a symlinked directory of the worktree', async () => {
    const { repo, path } = await setup()
    const outside = tmpDir()
    symlinkSync(outside, join(path, 'packages'))
    const result = await copyIncludedFiles(repo.dir, path, ['packages/**'], { env: repo.env })
    expect(result).toEqual({ copied: [], skipped: ['packages/api/.env'] })
    expect(existsSync(join(outside, 'api'))).toBe(false)
  })

  test('works from a subdirectory of the source checkout; no globs is a no-op', async () => {
    const { repo, path } = await setup()
    const result = await copyIncludedFiles(join(repo.dir, 'config'), path, ['.env'], { env: repo.env })
    expect(result.copied).toEqual(['.env'])
    expect(await copyIncludedFiles(repo.dir, path, [], { env: repo.env })).toEqual({
      copied: [],
      skipped: [],
    })
  })

  test.each(['../outside', '/absolute/pattern', 'a/../../b'])('rejects the pattern %j', async (glob) => {
    const { repo, path } = await setup()
    const error = await copyIncludedFiles(repo.dir, path, [glob], { env: repo.env })
      .then(() => undefined)
      .catch((caught: unknown) => caught)
    expect(error instanceof HarnessError && error.code).toBe('INVALID_INCLUDE')
  })
})
