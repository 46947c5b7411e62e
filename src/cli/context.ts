import { basename, dirname, join, resolve } from 'node:path'
import type { HarnessConfig } from '../config.js'
import { statOrNull } from '../disk/door.js'
import { UsageError } from '../errors.js'
import { checkIdentity } from '../process/identity.js'
import type { OutputSink } from '../process/pipes.js'
import { assertOwnFolders, findProject, HARNESS_DIR_NAME, type ProjectPaths } from '../project.js'
import { type ChainRecords, type Processes, type SessionEnv, systemClock } from '../sessions/ports.js'
import type { SessionStore } from '../sessions/record/store.js'
import type { CliIo } from './io.js'
import { lazy, type Services } from './lazy.js'
import type { GlobalOptions, Output } from './output.js'

/** What a command needs from its surroundings, resolved lazily so cheap commands stay cheap. */
export class Context implements SessionEnv {
  private projectPromise: Promise<ProjectPaths> | undefined
  private storeInstance: SessionStore | undefined

  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly clock = systemClock
  readonly processes: Processes = realProcesses

  constructor(
    readonly out: Output,
    /** Arguments after `--`, for the agent (`harness run -a exec -- npm test`). */
    readonly passthrough: string[],
    private readonly io: Pick<CliIo, 'cwd' | 'env' | 'stdin' | 'stdinIsTerminal'>,
    /**
     * Where a command's action gets its services and renderers (gh's `runF` seam): the lazy registry, or in a
     * test stand-ins, so that a command's flags are checked without running what they drive.
     */
    readonly services: Services = lazy,
  ) {
    this.cwd = io.cwd
    this.env = io.env
  }

  /** Where a piped prompt or a confirmation comes from; made on first use (cli/io.ts). */
  get stdin(): CliIo['stdin'] {
    return this.io.stdin
  }

  get options(): GlobalOptions {
    return this.out.options
  }

  /** --json promises one document on stdout: the agent cannot have the terminal then. */
  get interactive(): boolean {
    return !this.options.json && this.stdinIsTerminal
  }

  get stdinIsTerminal(): boolean {
    return this.io.stdinIsTerminal?.() ?? this.stdin.isTTY === true
  }

  get agentOutput(): OutputSink {
    return this.options.json ? this.out.stderr : this.out.stdout
  }

  /** All of stdin, as text (a piped prompt, a plan sent to a detached harness). */
  /** All of stdin as text; more than `maxBytes` is a usage error (read no further: `what` names it). */
  async readStdin(maxBytes = Number.POSITIVE_INFINITY, what = 'stdin'): Promise<string> {
    const chunks: Buffer[] = []
    let total = 0
    for await (const chunk of this.stdin) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
      total += bytes.length
      if (total > maxBytes) {
        throw new UsageError(
          `${what} is over ${maxBytes} bytes: harness takes no more`,
          'put the long text in a file in the worktree and point the prompt at it',
          'PROMPT_TOO_LONG',
        )
      }
      chunks.push(bytes)
    }
    return Buffer.concat(chunks).toString('utf8')
  }

  notice(message: string): void {
    this.out.info(message)
  }

  get quiet(): boolean {
    return this.out.options.quiet
  }

  warn(message: string): void {
    this.out.warn(message)
  }

  async config(): Promise<HarnessConfig> {
    const paths = await this.project()
    const { loadConfig } = await lazy.config()
    return loadConfig({ projectConfigFile: paths.configFile, env: this.env })
  }

  project(): Promise<ProjectPaths> {
    this.projectPromise ??= this.checkExplicitDir()
      .then(() => findProject({ cwd: this.cwd, dir: this.options.dir, env: this.env }))
      .then((paths) => {
        assertOwnFolders(paths)
        return paths
      })
    return this.projectPromise
  }

  /** A --dir or HARNESS_DIR whose project folder does not exist is a typo: never list nothing, never create it. */
  private async checkExplicitDir(): Promise<void> {
    const [source, given] = this.options.dir
      ? ['--dir', this.options.dir]
      : ['HARNESS_DIR', this.env.HARNESS_DIR || undefined]
    if (given === undefined) return
    const abs = resolve(this.cwd, given)
    const folder = basename(abs) === HARNESS_DIR_NAME ? dirname(abs) : abs
    if (statOrNull(folder)?.isDirectory() !== true) {
      throw new UsageError(
        `${source} ${given}: no such directory`,
        'give the project folder (or its .harness folder)',
        'INVALID_DIR',
      )
    }
  }

  async chains(): Promise<ChainRecords> {
    const paths = await this.project()
    const { ChainStore } = await lazy.chainsStore()
    const { RecordSealer } = (await lazy.records()).seal
    // No warning sink: a corrupt chain file must not print into the middle of a command line (completion).
    return new ChainStore(join(paths.harnessDir, 'chains'), RecordSealer.forEnv(this.env))
  }

  async storeOf(paths: ProjectPaths): Promise<SessionStore> {
    const { recordStore, seal } = await lazy.records()
    const { SessionStore } = recordStore
    const { RecordSealer } = seal
    return new SessionStore(paths.sessionsDir, {
      sealer: RecordSealer.forEnv(this.env),
      env: this.env,
      warn: (problem) => this.out.warn(`${problem.path}: ${problem.reason}`),
    })
  }

  async store(): Promise<SessionStore> {
    if (this.storeInstance) return this.storeInstance
    const paths = await this.project()
    const { recordStore, seal, statusHooks } = await lazy.records()
    const { SessionStore } = recordStore
    const { RecordSealer } = seal
    const { statusHookObserver } = statusHooks
    this.storeInstance = new SessionStore(paths.sessionsDir, {
      sealer: RecordSealer.forEnv(this.env),
      env: this.env,
      now: () => this.clock.now(),
      warn: (problem) => this.out.warn(`${problem.path}: ${problem.reason}`),
      // Config is read only when a status or state actually changes: reading commands never pay for it.
      onChange: statusHookObserver(
        async () => {
          const { loadConfig, readConfigFile, userConfigFile } = await lazy.config()
          try {
            return loadConfig({ projectConfigFile: paths.configFile, env: this.env }).hooks?.on_status
          } catch {
            // An untrusted (or broken) project config defines no hook; the user's own config still may.
            try {
              return readConfigFile(userConfigFile(this.env))?.hooks?.on_status
            } catch {
              return null // a hook is never fatal
            }
          }
        },
        paths.logsDir,
        this.env,
      ),
    })
    return this.storeInstance
  }
}

/** The live process table. Identity checks are cheap and synchronous; stopping a tree loads its module lazily. */
const realProcesses: Processes = {
  selfPid: process.pid,
  check: (recorded) => checkIdentity(recorded),
  signal(pid, signal) {
    try {
      process.kill(pid, signal)
      return true
    } catch {
      return false
    }
  },
  async stopTree(root, options) {
    const { stopProcessTree } = await lazy.stop()
    return stopProcessTree(root, options)
  },
}
