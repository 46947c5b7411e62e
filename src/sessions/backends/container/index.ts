import { ExternalToolError, IllegalStateError, UsageError } from '../../../errors.js'
import type { ContainerChoice, PlacedRun, RunRequest, SessionBackend } from '../backend.js'
import {
  collectContainer,
  createContainer,
  settleContainer,
  stopContainer,
  viewContainer,
} from './backend.js'
import {
  EngineTimeoutError,
  findEngine,
  removeContainer,
  verifiedContainer,
  waitContainer,
} from './engine.js'

/**
 * A resume whose last run's commits did not come back (a collection that failed, or never happened: a settled
 * run without `collected`) collects them now; when it still cannot, the resume is refused (exit 4) and the
 * private clone that holds them is kept.
 */
async function collectFirst(run: RunRequest, repo: { dir: string; branch: string }): Promise<void> {
  const previous = run.previous
  const done = ['none', 'fast-forward', 'diverged']
  if (!previous?.git_dir || !previous.start_tip || done.includes(previous.collected?.kind ?? '')) return
  const outcome = await collectContainer(
    previous,
    {
      id: run.id,
      harnessDir: run.harnessDir,
      repoDir: repo.dir,
      worktreeDir: run.worktreeDir,
      branch: repo.branch,
    },
    run.env,
  )
  if (outcome.kind !== 'failed') return
  throw new IllegalStateError(
    `the commits of session "${run.id}"'s last run are not back on its branch yet: ${outcome.reason}`,
    `they are kept in ${previous.git_dir}; once that is fixed, "harness session resume ${run.id}" brings them back first`,
    'UNCOLLECTED_WORK',
  )
}

/** Creates the run's container (docs/backends.md); what the supervisor runs, and how the record names it. */
async function placeContainerRun(choice: ContainerChoice, run: RunRequest): Promise<PlacedRun> {
  const image = choice.image
  if (!image) {
    throw new UsageError(
      'a container session needs an image that contains the agent CLI',
      'pass --image IMAGE, or set it: harness config set container.image IMAGE --user',
      'IMAGE_MISSING',
    )
  }
  const { gitCommonDir } = await import('../../../git/git.js')
  const commonDir = run.repo ? await gitCommonDir(run.repo.dir, run.env) : null
  if (run.repo && !commonDir) {
    throw new ExternalToolError(`cannot find the git directory of ${run.repo.dir}`)
  }
  // The last run's commits, if they are not back yet, before its private clone is made afresh.
  if (run.repo) await collectFirst(run, run.repo)
  // --no-worktree in a repository: its .git is mounted read-only (mounts.ts).
  const { checkoutOf } = await import('../../../git/container-git.js')
  const checkout = run.repo ? null : await checkoutOf(run.worktreeDir, run.env)
  const created = await createContainer({
    id: run.id,
    runN: run.runN,
    engine: choice.engine,
    image,
    network: choice.network ?? 'none',
    envNames: choice.env ?? [],
    worktreeDir: run.worktreeDir,
    cwd: run.cwd,
    harnessDir: run.harnessDir,
    agentDir: run.agentDir,
    repo: run.repo && commonDir ? { ...run.repo, commonDir } : null,
    checkout,
    command: run.command,
    args: run.args,
    interactive: run.interactive,
    env: run.env,
  })
  return {
    command: created.command,
    args: created.args,
    record: { backend: 'container', container: created.facts },
    settle: {
      id: run.id,
      container: created.facts,
      harnessDir: run.harnessDir,
      repoDir: run.repo?.dir ?? null,
      worktreeDir: run.worktreeDir,
      branch: run.repo?.branch ?? null,
    },
    undo: created.undo,
  }
}

/** podman or docker (docs/backends.md). */
export function containerBackend(choice: ContainerChoice): SessionBackend {
  return {
    name: 'container',
    place: (run) => placeContainerRun(choice, run),
    async view(record, env) {
      const facts = record.container
      if (!facts) return { kind: 'unverified' }
      return viewContainer(facts, env)
    },
    async stop(record, graceMs, env) {
      if (!record.container) return 'unverified'
      return stopContainer(record.container, graceMs, env)
    },
    async settle(settlement, env, options) {
      return settleContainer(settlement.container, settlement, env, options)
    },
    async wait(record, env, timeoutMs) {
      const facts = record.container
      if (!facts) return undefined
      const engine = await findEngine(facts.engine as 'podman' | 'docker', env)
      try {
        const state = await verifiedContainer(engine, { id: facts.id, created: facts.created }, env)
        if (typeof state !== 'object') return undefined
      } catch (error) {
        // An engine that does not answer: the caller follows the record instead (never a hang here).
        if (error instanceof EngineTimeoutError) return undefined
        throw error
      }
      return waitContainer(engine, facts.id, env, timeoutMs)
    },
    async destroy(record, env) {
      const facts = record.container
      if (!facts) return
      const engine = await findEngine(facts.engine as 'podman' | 'docker', env).catch(() => null)
      if (!engine) return
      const state = await verifiedContainer(engine, { id: facts.id, created: facts.created }, env)
      if (typeof state === 'object') await removeContainer(engine, facts.id, env)
    },
  }
}
