import { ExternalToolError, IllegalStateError, UsageError } from '../errors.js'
import { assertFullRefName, assertRefArg } from './common.js'
import { type GitEnvOptions, gitAt, gitDetail } from './git.js'

/**
 * Refs other than branches (checkpoints, snapshots, an archive's restored refs): listing, storing and the
 * one transaction (`git update-ref --stdin`) every multi-ref change goes through.
 */

/** Refs under `prefix` (e.g. refs/harness/<id>/checkpoints/) and the commits they point at. */
export async function listRefs(
  repo: string,
  prefix: string,
  options: GitEnvOptions,
): Promise<Map<string, string>> {
  assertRefArg(prefix, 'ref prefix')
  const lines = await gitAt(repo, options).lines([
    'for-each-ref',
    '--format=%(refname)%00%(objectname)',
    prefix,
  ])
  const refs = new Map<string, string>()
  for (const line of lines) {
    const [name, target] = line.split('\0')
    if (name && target) refs.set(name, target)
  }
  return refs
}

/** One change of a transaction: `create` (must not exist), `delete` (while it points at `old`, if given). */
export type RefChange = { create: string; commit: string } | { delete: string; old?: string }

/**
 * Applies `changes` all together or not at all. A refusal (a ref moved, exists or is gone) is returned with
 * git's summary, for the caller to decide: retry one at a time, or fail.
 */
export async function updateRefs(
  repo: string,
  changes: RefChange[],
  options: GitEnvOptions & { message?: string },
): Promise<{ ok: true } | { ok: false; detail: string }> {
  if (changes.length === 0) return { ok: true }
  let input = ''
  for (const change of changes) {
    const ref = 'create' in change ? change.create : change.delete
    assertRefArg(ref, 'ref')
    if (/\s/.test(ref) || !ref.startsWith('refs/')) {
      throw new UsageError(`invalid ref name ${JSON.stringify(ref)}`, undefined, 'INVALID_REF')
    }
    const value = 'create' in change ? change.commit : change.old
    if (value !== undefined) assertRefArg(value, 'commit')
    const verb = 'create' in change ? 'create' : 'delete'
    input += value === undefined ? `${verb} ${ref}\n` : `${verb} ${ref} ${value}\n`
  }
  const message = options.message ? ['-m', options.message] : []
  const result = await gitAt(repo, options).try(['update-ref', ...message, '--stdin'], { input })
  return result.exitCode === 0 ? { ok: true } : { ok: false, detail: gitDetail(result) }
}

/** `updateRefs` that must succeed: a refusal is GIT_FAILED. */
export async function applyRefs(
  repo: string,
  changes: RefChange[],
  options: GitEnvOptions & { message?: string },
): Promise<void> {
  const done = await updateRefs(repo, changes, options)
  if (!done.ok) throw new ExternalToolError(`git update-ref failed: ${done.detail}`, undefined, 'GIT_FAILED')
}

/**
 * Deletes the given refs in one transaction; refs already gone are fine. Each must lie under `prefix`, so a
 * record can never make harness delete anything else.
 */
export async function deleteRefs(
  repo: string,
  prefix: string,
  refs: string[],
  options: GitEnvOptions,
): Promise<void> {
  const mine = refs.filter((ref) => ref.startsWith(prefix) && !/[\s\0]/.test(ref) && !ref.includes('..'))
  await applyRefs(
    repo,
    mine.map((ref) => ({ delete: ref })),
    options,
  )
}

/** Points `ref` at `commit`; without `overwrite` an existing ref is an error, so no snapshot is ever lost. */
export async function storeRef(
  repo: string,
  ref: string,
  commit: string,
  message: string,
  options: GitEnvOptions & { overwrite?: boolean },
): Promise<void> {
  // An empty old value makes the update fail if the ref exists.
  const args = [
    'update-ref',
    '--create-reflog',
    '-m',
    reflogLine(message, 'harness snapshot'),
    ref,
    commit,
    ...(options.overwrite ? [] : ['']),
  ]
  const result = await gitAt(repo, options).try(args)
  if (result.exitCode === 0) return
  if (!options.overwrite && /exists/.test(result.stderr)) {
    throw new IllegalStateError(`ref ${ref} already exists`, 'snapshots are never overwritten', 'REF_EXISTS')
  }
  throw new IllegalStateError(`could not store ${ref}: ${gitDetail(result)}`, undefined, 'SNAPSHOT_FAILED')
}

/** Points `ref` at `commit` (a repair): the commit must exist. */
export async function setRef(
  repo: string,
  ref: string,
  commit: string,
  message: string,
  options: GitEnvOptions,
): Promise<void> {
  await assertFullRefName(repo, ref, options)
  await storeRef(repo, ref, commit, message, { ...options, overwrite: true })
}

/** A message's first line, for a reflog entry (never starting with `-`). */
export function reflogLine(message: string, fallback: string): string {
  const line = message.split('\n')[0]?.trim() || fallback
  return line.startsWith('-') ? `harness: ${line}` : line
}
