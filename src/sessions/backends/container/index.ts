import { ExternalToolError, UsageError } from '../../../errors.js'
import type { ContainerChoice, SessionBackend } from '../backend.js'
import { createContainer, settleContainer, stopContainer, viewContainer } from './backend.js'
import { findEngine, removeContainer, verifiedContainer, waitContainer } from './engine.js'

/** podman or docker (docs/backends.md). */
export function containerBackend(choice: ContainerChoice): SessionBackend {
  return {
    name: 'container',
    async place(run) {
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
    },
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
      const state = await verifiedContainer(engine, { id: facts.id, created: facts.created }, env)
      if (typeof state !== 'object') return undefined
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
