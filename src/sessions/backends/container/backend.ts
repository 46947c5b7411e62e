import { join } from 'node:path'
import { ensureDir } from '../../../disk/door.js'
import { ExternalToolError } from '../../../errors.js'
import { type ContainerGit, prepareContainerGit } from '../../../git/container-git.js'
import { type CollectOutcome, collectAgentCommits } from '../../../git/quarantine.js'
import type { ContainerFacts } from '../../record/schema.js'
import {
  ENGINE_DEADLINES,
  type Engine,
  type EngineName,
  EngineTimeoutError,
  engineText,
  findEngine,
  inspectContainer,
  removeContainer,
  runEngine,
  stopAndRemove,
  verifiedContainer,
} from './engine.js'
import { containerMounts, volumeFlag } from './mounts.js'

/** Everything a run in a container needs from the session (paths are the same inside and out). */
export interface ContainerRunInput {
  id: string
  runN: number
  engine?: EngineName
  image: string
  /** `--network` (default none: no network at all). */
  network: string
  /** Names of variables passed in; their values come from harness's environment and are never recorded. */
  envNames: string[]
  worktreeDir: string
  /** Where the agent starts (the worktree's counterpart of the user's folder). */
  cwd: string
  harnessDir: string
  agentDir: string
  /** The repository of a worktree session and its branch; null without one. */
  repo: { dir: string; branch: string } | null
  /** `--no-worktree` inside a repository: that checkout's `.git` and common dir (never writable inside). */
  checkout: { dotGit: string; commonDir: string } | null
  command: string
  args: string[]
  interactive: boolean
  /** harness's environment: the engine's, and where the named variables' values come from. */
  env: NodeJS.ProcessEnv
}

/** A created container, not yet started: what the record keeps and what the supervisor runs. */
export interface CreatedContainer {
  facts: ContainerFacts
  engine: Engine
  /** What the supervisor spawns: the engine's client attached to the container (its exit code is the agent's). */
  command: string
  args: string[]
  /** Removes the container (a run that never got its record). */
  undo(): Promise<void>
}

/** The container folder of a session: the private git directory and the `.git` pointer shown inside. */
function containerFolder(harnessDir: string, id: string): string {
  return join(harnessDir, 'agents', id, 'container')
}

/** The user's $HOME inside: in the per-agent folder, so an agent CLI's own state survives into a resume. */
function homeInside(agentDir: string): string {
  return join(agentDir, 'home')
}

/**
 * Creates the container of one run (docs/backends.md, "Mounts"): the worktree read-write at its own path, the
 * repository's `.git` read-only, the worktree's `.git` pointer masked by one naming a private clone, the
 * per-agent folder read-write; network none unless configured; only the named variables passed (as `-e NAME`,
 * so their values are in no argv).
 */
export async function createContainer(input: ContainerRunInput): Promise<CreatedContainer> {
  const engine = await findEngine(input.engine, input.env)
  const folder = containerFolder(input.harnessDir, input.id)
  const git = input.repo
    ? await prepareContainerGit({
        worktreeDir: input.worktreeDir,
        branch: input.repo.branch,
        folder,
        env: input.env,
      })
    : null
  const home = homeInside(input.agentDir)
  ensureDir(home)
  const name = `harness-${input.id}-${input.runN}`
  const args = createArgs(input, engine, git, folder, name, home)
  const id = await engineText(
    engine,
    args,
    input.env,
    `create the session's container (image ${input.image})`,
    ENGINE_DEADLINES.create,
  )
  const state = await inspectContainer(engine, id, input.env)
  if (!state) {
    await removeContainer(engine, id, input.env)
    throw new ExternalToolError(
      `${engine.name} created container ${id} but cannot inspect it`,
      undefined,
      'ENGINE_FAILED',
    )
  }
  const facts: ContainerFacts = {
    engine: engine.name,
    image: input.image,
    network: input.network,
    env: input.envNames,
    id,
    created: state.created,
    name,
    git_dir: git?.gitDir ?? null,
    start_tip: git?.startTip ?? null,
  }
  return {
    facts,
    engine,
    command: engine.binary,
    args: ['start', '--attach', ...(input.interactive ? ['--interactive'] : []), id],
    undo: () => removeContainer(engine, id, input.env),
  }
}

/** `<engine> create` arguments for one run: mounts (mounts.ts), labels, the named variables (names only), the command. */
function createArgs(
  input: ContainerRunInput,
  engine: Engine,
  git: ContainerGit | null,
  cloneFolder: string,
  name: string,
  home: string,
): string[] {
  const mounts = containerMounts({
    folder: input.worktreeDir,
    harnessDir: input.harnessDir,
    agentDir: input.agentDir,
    worktree:
      input.repo && git
        ? { commonDir: git.commonDir, cloneFolder, gitDir: git.gitDir, pointerFile: git.pointerFile }
        : null,
    checkout: input.repo ? null : input.checkout,
  })
  const args = [
    'create',
    `--name=${name}`,
    '--init',
    `--network=${input.network}`,
    `--label=harness.session=${input.id}`,
    `--label=harness.run=${input.runN}`,
    `--workdir=${input.cwd}`,
    ...userArgs(engine),
    ...mounts.map(volumeFlag),
    `--env=HARNESS_SESSION_ID=${input.id}`,
    `--env=HARNESS_DIR=${input.harnessDir}`,
    `--env=HOME=${home}`,
    `--env=PWD=${input.cwd}`,
  ]
  for (const variable of input.envNames) args.push(`--env=${variable}`)
  if (input.interactive) args.push('--interactive', '--tty')
  args.push('--', input.image, input.command, ...input.args)
  return args
}

/** Rootless engines map the user to root inside; files the agent writes must be the user's on the host. */
function userArgs(engine: Engine): string[] {
  const uid = process.getuid?.()
  const gid = process.getgid?.()
  if (uid === undefined || uid === 0) return []
  return engine.name === 'podman' ? ['--userns=keep-id'] : [`--user=${uid}:${gid}`]
}

/** The engine a record names (only a sealed record's facts are ever used for acting). */
async function engineOf(facts: ContainerFacts, env: NodeJS.ProcessEnv): Promise<Engine> {
  return findEngine(facts.engine as EngineName, env)
}

export type ContainerView =
  | { kind: 'running' }
  | { kind: 'exited'; exitCode: number | null }
  | { kind: 'gone' }
  /** The engine has another container under that id, or cannot say (`warning`: why): never acted on. */
  | { kind: 'unverified'; warning?: string }

/** What the engine says of the record's container, checked against the identity the record holds. */
async function viewContainer(facts: ContainerFacts, env: NodeJS.ProcessEnv): Promise<ContainerView> {
  let engine: Engine
  try {
    engine = await engineOf(facts, env)
  } catch {
    return { kind: 'unverified' }
  }
  let state: Awaited<ReturnType<typeof verifiedContainer>>
  try {
    state = await verifiedContainer(engine, { id: facts.id, created: facts.created }, env)
  } catch (error) {
    // An engine that does not answer: what the record says stands, with a warning (never a hang).
    if (error instanceof EngineTimeoutError) return { kind: 'unverified', warning: error.message }
    throw error
  }
  if (state === 'gone') return { kind: 'gone' }
  if (state === 'mismatch') return { kind: 'unverified' }
  return state.running ? { kind: 'running' } : { kind: 'exited', exitCode: state.exitCode }
}

/** Where a container session's work goes back to: its repository, worktree and branch. */
interface ContainerSessionPlace {
  id: string
  harnessDir: string
  repoDir: string | null
  worktreeDir: string
  branch: string | null
}

/**
 * The end of a container run, whoever sees it (the supervisor, or a command that found it without one):
 * the container is forced down if still there and removed, and the agent's commits come back to its branch
 * through a quarantine repository (src/git/quarantine.ts).
 */
export async function settleContainer(
  facts: ContainerFacts,
  session: ContainerSessionPlace,
  env: NodeJS.ProcessEnv,
  options: { ours?: boolean; signal?: AbortSignal; alongside?: (release: Promise<void>) => void } = {},
): Promise<CollectOutcome> {
  // `ours`: the supervisor that created it in this very run settles it, so its identity needs no check.
  const removing = removeIfOurs(facts, env, options.ours === true).catch(() => {})
  // Its end awaits the removal before the outcome is written, beside the run-end checkpoint.
  if (options.alongside) {
    options.alongside(removing)
    return collectContainer(facts, session, env, options.signal)
  }
  try {
    return await collectContainer(facts, session, env, options.signal)
  } finally {
    // Side by side with collecting: the container's files are not what the commits come from.
    await removing
  }
}

/** The agent's commits of the record's private clone brought to the session's branch (none without git). */
export async function collectContainer(
  facts: ContainerFacts,
  session: ContainerSessionPlace,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<CollectOutcome> {
  if (!session.repoDir || !session.branch || !facts.git_dir || !facts.start_tip) return { kind: 'none' }
  try {
    return await collectAgentCommits({
      repoDir: session.repoDir,
      worktreeDir: session.worktreeDir,
      id: session.id,
      agent: { gitDir: facts.git_dir, branch: session.branch, startTip: facts.start_tip },
      tempDir: join(session.harnessDir, 'tmp'),
      env,
      signal,
    })
  } catch (error) {
    return { kind: 'failed', reason: error instanceof Error ? error.message : String(error) }
  }
}

async function removeIfOurs(facts: ContainerFacts, env: NodeJS.ProcessEnv, ours: boolean): Promise<void> {
  const engine = await engineOf(facts, env).catch(() => null)
  if (!engine) return
  if (!ours) {
    const state = await verifiedContainer(engine, { id: facts.id, created: facts.created }, env)
    if (typeof state !== 'object') return
  }
  await removeContainer(engine, facts.id, env).catch(() => {})
}

/** Stops a container the engine verified as the record's (grace, then force) and removes it. */
export async function stopContainer(
  facts: ContainerFacts,
  graceMs: number,
  env: NodeJS.ProcessEnv,
): Promise<'stopped' | 'gone' | 'unverified'> {
  const view = await viewContainer(facts, env)
  if (view.kind === 'unverified') return 'unverified'
  if (view.kind === 'gone') return 'gone'
  const engine = await engineOf(facts, env)
  await stopAndRemove(engine, facts.id, graceMs, env)
  return 'stopped'
}

/** `doctor`: the engine, its version, and whether a test container starts. */
export async function checkEngine(
  wanted: EngineName | undefined,
  image: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<{ engine: string; binary: string; version: string | null; test: 'ok' | 'skipped' | string }> {
  const engine = await findEngine(wanted, env)
  const version = await runEngine(engine, ['version', '--format', '{{.Client.Version}}'], env)
  let test = 'skipped'
  if (image) {
    const run = await runEngine(engine, ['run', '--rm', '--network=none', '--', image, 'true'], env, {
      timeoutMs: ENGINE_DEADLINES.create,
    })
    test = run.exitCode === 0 ? 'ok' : `failed: ${run.stderr.trim().split('\n').pop() ?? run.exitCode}`
  }
  return {
    engine: engine.name,
    binary: engine.binary,
    version: version.exitCode === 0 ? version.stdout.trim() : null,
    test,
  }
}
