import { dirname, resolve, sep } from 'node:path'
import { chmodDir, pathExists, realPath as realPathOf } from '../../disk/door.js'
import { existingCommits } from '../../git/checkpoint.js'
import { listRefs, setRef } from '../../git/refs.js'
import { recreateWorktree } from '../../git/worktree.js'
import { listWorktrees } from '../../git/worktree-list.js'
import type { SessionRecord } from '../record/schema.js'
import { assertSealed } from '../record/seal.js'
import { planRecreation, putBackFiles, recreationFacts } from '../recreation.js'
import { checkpointRef } from '../work/checkpoints.js'

/**
 * What `recover --scan` checks of each session beyond liveness (docs/continuity.md, "Recover: integrity"):
 * its checkpoint chain (consecutive, every ref present and at its recorded commit) and its worktree (there,
 * registered with git, on its branch).
 */
export type IntegrityKind =
  | 'checkpoints-not-consecutive'
  | 'checkpoint-ref-name'
  | 'checkpoint-ref-missing'
  | 'checkpoint-ref-moved'
  | 'checkpoint-commit-missing'
  | 'worktree-missing'
  | 'worktree-unregistered'
  | 'worktree-wrong-branch'
  | 'repository-unreadable'

export interface IntegrityProblem {
  kind: IntegrityKind
  /** The checkpoint concerned. */
  n?: number
  message: string
  /** `recover <id>` can repair it (a ref from its commit, a worktree from its branch). */
  repairable: boolean
}

interface RepoFacts {
  refs: Map<string, string>
  /** Registered worktrees by real path: their branch. */
  worktrees: Map<string, string | null>
  /** Commits that checkpoints name and the repository holds. */
  commits: Set<string>
  branchExists: (branch: string) => boolean
}

/** The repository a session's checkpoints and worktree belong to, if it has any. */
function repoOf(record: SessionRecord): string | null {
  // git runs only where a record harness sealed points: a foreign one may name any folder (docs/security.md).
  if (!record.base_dir || record.sealed !== true) return null
  if (!record.is_worktree && !(record.checkpoints?.length ?? 0)) return null
  return record.base_dir
}

/** Problems of each session (only sessions with problems are in the map). Reads git once per repository. */
export async function checkIntegrity(
  records: SessionRecord[],
  env: NodeJS.ProcessEnv,
): Promise<Map<string, IntegrityProblem[]>> {
  const byRepo = new Map<string, SessionRecord[]>()
  for (const record of records) {
    const repo = repoOf(record)
    if (repo) byRepo.set(repo, [...(byRepo.get(repo) ?? []), record])
  }
  const found = new Map<string, IntegrityProblem[]>()
  for (const [repo, sessions] of byRepo) {
    const facts = await repoFacts(repo, sessions, env)
    for (const record of sessions) {
      const problems = facts
        ? await sessionProblems(record, facts)
        : [
            {
              kind: 'repository-unreadable' as const,
              message: `its repository ${repo} cannot be read`,
              repairable: false,
            },
          ]
      if (problems.length) found.set(record.id, problems)
    }
  }
  return found
}

async function repoFacts(
  repo: string,
  sessions: SessionRecord[],
  env: NodeJS.ProcessEnv,
): Promise<RepoFacts | null> {
  if (!pathExists(repo)) return null
  try {
    // Branches and refs are read once per repository, whatever the number of sessions.
    const branches = await listRefs(repo, 'refs/heads/', { env })
    return {
      refs: await listRefs(repo, 'refs/harness/', { env }),
      worktrees: new Map((await listWorktrees(repo, { env })).map((w) => [realPath(w.path), w.branch])),
      commits: await existingCommits(
        repo,
        sessions.flatMap((s) => (s.checkpoints ?? []).map((c) => c.commit)),
        { env },
      ),
      branchExists: (branch) => branches.has(`refs/heads/${branch}`),
    }
  } catch {
    return null
  }
}

async function sessionProblems(record: SessionRecord, facts: RepoFacts): Promise<IntegrityProblem[]> {
  const problems: IntegrityProblem[] = []
  const checkpoints = record.checkpoints ?? []
  if (checkpoints.some((c, i) => c.n !== i)) {
    problems.push({
      kind: 'checkpoints-not-consecutive',
      message: `checkpoints are numbered ${checkpoints.map((c) => c.n).join(', ')}, not 0, 1, 2…`,
      repairable: false,
    })
  }
  for (const checkpoint of checkpoints) {
    const ref = checkpointRef(record.id, checkpoint.n)
    if (checkpoint.ref !== ref) {
      problems.push({
        kind: 'checkpoint-ref-name',
        n: checkpoint.n,
        message: `checkpoint ${checkpoint.n} names ref ${checkpoint.ref}, not ${ref}`,
        repairable: false,
      })
      continue
    }
    const target = facts.refs.get(ref)
    if (target === checkpoint.commit) continue
    const commit = facts.commits.has(checkpoint.commit)
    if (!commit) {
      problems.push({
        kind: 'checkpoint-commit-missing',
        n: checkpoint.n,
        message: `checkpoint ${checkpoint.n}: its commit ${checkpoint.commit.slice(0, 12)} is not in the repository${target ? '' : ' and its ref is gone'}`,
        repairable: false,
      })
    } else {
      problems.push({
        kind: target ? 'checkpoint-ref-moved' : 'checkpoint-ref-missing',
        n: checkpoint.n,
        message: target
          ? `checkpoint ${checkpoint.n}: ${ref} points at ${target.slice(0, 12)}, not at its commit ${checkpoint.commit.slice(0, 12)}`
          : `checkpoint ${checkpoint.n}: ${ref} is missing (its commit ${checkpoint.commit.slice(0, 12)} is still there)`,
        repairable: true,
      })
    }
  }
  if (record.is_worktree && record.git_branch) problems.push(...(await worktreeProblems(record, facts)))
  return problems
}

async function worktreeProblems(record: SessionRecord, facts: RepoFacts): Promise<IntegrityProblem[]> {
  const branch = record.git_branch as string
  if (!pathExists(record.worktree_dir)) {
    const recreatable = record.status !== 'RUNNING' && facts.branchExists(branch)
    return [
      {
        kind: 'worktree-missing',
        message: `its worktree ${record.worktree_dir} is gone${recreatable ? ` (branch ${branch} is there)` : ''}`,
        repairable: recreatable,
      },
    ]
  }
  const here = realPath(record.worktree_dir)
  if (!facts.worktrees.has(here)) {
    return [
      {
        kind: 'worktree-unregistered',
        message: `${record.worktree_dir} is not a worktree git knows of ("git worktree list")`,
        repairable: false,
      },
    ]
  }
  const registered = facts.worktrees.get(here) ?? null
  if (registered !== branch) {
    return [
      {
        kind: 'worktree-wrong-branch',
        message: `its worktree is on ${registered ? `branch ${registered}` : 'a detached HEAD'}, not on ${branch}`,
        repairable: false,
      },
    ]
  }
  return []
}

function realPath(path: string): string {
  try {
    return realPathOf(path)
  } catch {
    return resolve(path)
  }
}

export interface IntegrityRepair {
  repaired: string[]
  unrepaired: IntegrityProblem[]
}

/**
 * Repairs what can be repaired: a checkpoint ref from its recorded commit, a missing worktree from its branch
 * (only inside harness's worktree roots, only for a session that is not running). A foreign record is never
 * acted on (docs/security.md).
 */
export async function repairIntegrity(
  record: SessionRecord,
  problems: IntegrityProblem[],
  options: { env: NodeJS.ProcessEnv; worktreeRoots: string[] },
): Promise<IntegrityRepair> {
  const result: IntegrityRepair = { repaired: [], unrepaired: [] }
  const repo = record.base_dir
  for (const problem of problems) {
    if (!problem.repairable || record.sealed !== true || !repo) {
      result.unrepaired.push(problem)
      continue
    }
    if (problem.kind === 'checkpoint-ref-missing' || problem.kind === 'checkpoint-ref-moved') {
      const checkpoint = record.checkpoints?.find((c) => c.n === problem.n)
      if (!checkpoint) continue
      await setRef(repo, checkpoint.ref, checkpoint.commit, 'harness recover: ref repaired from its record', {
        env: options.env,
      })
      result.repaired.push(
        `checkpoint ${checkpoint.n}: ${checkpoint.ref} points at ${checkpoint.commit.slice(0, 12)} again`,
      )
      continue
    }
    if (problem.kind === 'worktree-missing' && record.git_branch) {
      if (!insideRoots(record.worktree_dir, options.worktreeRoots)) {
        result.unrepaired.push({
          ...problem,
          message: `${problem.message}; not recreated: ${record.worktree_dir} is outside harness's worktree folders`,
          repairable: false,
        })
        continue
      }
      await recreateWorktree({
        repoDir: repo,
        path: record.worktree_dir,
        branch: record.git_branch,
        env: options.env,
      })
      chmodDir(record.worktree_dir, 0o700)
      result.repaired.push(
        `worktree ${record.worktree_dir} recreated from branch ${record.git_branch}${await filesPutBack(record, repo, options.env)}`,
      )
      continue
    }
    result.unrepaired.push(problem)
  }
  return result
}

/**
 * As resume does (sessions/recreation.ts): the files of the latest checkpoint put back into a worktree just
 * recreated, when it was taken on the branch's tip (the work the run left uncommitted). Its words for the report.
 */
async function filesPutBack(record: SessionRecord, repo: string, env: NodeJS.ProcessEnv): Promise<string> {
  const plan = planRecreation(record, await recreationFacts(assertSealed(record), repo, env))
  if (plan.kind !== 'branch' || !plan.restore) return ''
  await putBackFiles(record.worktree_dir, plan.restore, { env, why: `recover ${record.id}` })
  return `, with the files of checkpoint ${plan.restore.n}`
}

/** The folder it would be made in lies under one of the roots (real paths: no way out through a symlink). */
function insideRoots(path: string, roots: string[]): boolean {
  const parent = realPath(dirname(resolve(path)))
  return roots.some((root) => {
    const real = realPath(root)
    return parent === real || parent.startsWith(real + sep)
  })
}
