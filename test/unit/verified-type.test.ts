import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { tmpDir } from '../helpers/tmp.js'

/**
 * Verified records are a type (SPEC §10, "By construction"; docs/security.md, "Verified records"): every
 * function that acts on what a record names takes a `VerifiedSession`, which only seal verification makes. This compiles a
 * small file against the real sources: each call with a record as read (unverified) must be a type error,
 * and the same calls with `verifiedSession(record)` must compile.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

const PROBE = (src: string) => `
import { restoreSessionCheckpoint } from '${src}/sessions/work/checkpoints.js'
import { ensureWorktree } from '${src}/sessions/run/workspace.js'
import { diffSources } from '${src}/sessions/work/diff.js'
import { sessionGitPlace } from '${src}/sessions/git-place.js'
import type { SessionEnv } from '${src}/sessions/ports.js'
import type { SessionRecord } from '${src}/sessions/record/schema.js'
import { verifiedSession } from '${src}/sessions/record/seal.js'
import type { SessionStore } from '${src}/sessions/record/store.js'

export async function probe(store: SessionStore, ctx: SessionEnv, env: NodeJS.ProcessEnv): Promise<void> {
  const record = store.get('abcd1234') as SessionRecord
  const forged = { ...record, sealed: true as const }
  const options = { env, projectRoot: '/p', now: new Date() }
  await ensureWorktree(ctx, record, '/p') // UNVERIFIED
  await restoreSessionCheckpoint(store, record, 0, options) // UNVERIFIED
  await diffSources(ctx, record, '/p') // UNVERIFIED
  await sessionGitPlace(record, env, '/p') // UNVERIFIED
  await sessionGitPlace(forged, env, '/p') // UNVERIFIED
  const verified = verifiedSession(record, 'acts on it')
  await ensureWorktree(ctx, verified, '/p')
  await restoreSessionCheckpoint(store, verified, 0, options)
  await diffSources(ctx, verified, '/p')
  await sessionGitPlace(verified, env, '/p')
}
`

test('an action called with an unverified record does not type-check; with a verified one it does', {
  tags: ['process'],
  timeout: 120_000,
}, async () => {
  const dir = tmpDir()
  const text = PROBE(join(ROOT, 'src'))
  writeFileSync(join(dir, 'probe.ts'), text)
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n')
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: { typeRoots: [join(ROOT, 'node_modules', '@types')] },
      include: [],
      files: [join(dir, 'probe.ts')],
    }),
  )
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    execFile(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], (error, out) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: out }),
    )
  })
  const lines = text.split('\n')
  const expected = lines.flatMap((line, i) => (line.includes('// UNVERIFIED') ? [i + 1] : []))
  const errors = [...stdout.matchAll(/probe\.ts\((\d+),\d+\): error (TS\d+): ([^\n]*)/g)]
  expect(code).not.toBe(0)
  expect(expected).toHaveLength(5)
  // Exactly the unverified calls fail, each because the brand is missing; the verified ones compile.
  expect(errors.map((m) => Number(m[1]))).toEqual(expected)
  for (const error of errors) {
    expect(error[2]).toBe('TS2345')
    expect(error[3]).toContain("parameter of type 'VerifiedSession<")
  }
})
