import type { HarnessConfig } from '../../config.js'
import { UsageError } from '../../errors.js'
import type { ProjectPaths } from '../../project.js'
import type { BackendName, ContainerChoice } from '../backends/backend.js'
import { backendFor } from '../backends/registry.js'
import { agentDirFor, ensureAgentDir } from '../record/agent-files.js'
import type { SessionRecord } from '../record/schema.js'
import type { RunPlan } from './runner.js'

/** `run --backend/--image/--engine`: what the user chose for this run (config fills the rest). */
export interface BackendOptions {
  backend?: BackendName
  image?: string
  engine?: 'podman' | 'docker'
}

/** The backend of a new run: the flag, else config `backend`, else local. */
export function chosenBackend(options: BackendOptions, config: HarnessConfig): BackendName {
  return options.backend ?? config.backend ?? 'local'
}

/**
 * A container run's choices: flags, then the record's own (a resume runs where its session ran, in the same
 * image with the same variables and network), then config.
 */
export function containerChoice(
  options: BackendOptions,
  config: HarnessConfig,
  previous?: SessionRecord,
): ContainerChoice {
  const before = previous?.container ?? undefined
  return {
    image: options.image ?? before?.image ?? config.container?.image,
    engine: options.engine ?? (before?.engine as ContainerChoice['engine']) ?? config.container?.engine,
    network: before?.network ?? config.container?.network,
    env: before?.env ?? config.container?.env,
  }
}

/** A container run needs an engine and an image: checked before anything is made. */
export async function checkBackend(
  backend: BackendName,
  choice: ContainerChoice,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  if (backend === 'local') return
  if (!choice.image) {
    throw new UsageError(
      'a container session needs an image that contains the agent CLI',
      'pass --image IMAGE, or set it: harness config set container.image IMAGE --user',
      'IMAGE_MISSING',
    )
  }
  const { findEngine } = await import('../backends/container/engine.js')
  await findEngine(choice.engine, env)
}

export interface Placement {
  plan: RunPlan
  record: Partial<SessionRecord>
  undo(): Promise<void>
}

/**
 * Puts a planned run where its backend runs it. Local: the plan as it is. Container: the container is created
 * (identity in the record) and the supervisor runs the engine's client attached to it.
 */
export async function placeRun(
  backend: BackendName,
  choice: ContainerChoice,
  paths: ProjectPaths,
  plan: RunPlan,
  session: Pick<
    SessionRecord,
    'id' | 'worktree_dir' | 'is_worktree' | 'git_branch' | 'base_dir' | 'container'
  >,
): Promise<Placement> {
  if (backend === 'local') return { plan, record: {}, undo: async () => {} }
  const implementation = await backendFor(backend, choice)
  ensureAgentDir(paths.harnessDir, session.id, false)
  const repo =
    session.is_worktree && session.git_branch
      ? { dir: session.base_dir ?? paths.root, branch: session.git_branch }
      : null
  const placed = await implementation.place({
    id: session.id,
    runN: plan.runN,
    kind: plan.kind,
    command: plan.command,
    args: plan.args,
    cwd: plan.cwd,
    interactive: plan.mode === 'interactive',
    env: plan.env,
    harnessDir: paths.harnessDir,
    agentDir: agentDirFor(paths.harnessDir, session.id),
    worktreeDir: session.worktree_dir,
    repo,
    previous: session.container ?? null,
  })
  return {
    plan: { ...plan, command: placed.command, args: placed.args, settle: placed.settle },
    record: placed.record,
    undo: placed.undo,
  }
}
