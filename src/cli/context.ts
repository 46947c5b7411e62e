import { findProject, type ProjectPaths } from '../project.js'
import type { SessionStore } from '../sessions/store.js'
import type { GlobalOptions, Output } from './output.js'

/** What a command needs from its surroundings, resolved lazily so cheap commands stay cheap. */
export class Context {
  private projectPromise: Promise<ProjectPaths> | undefined
  private storeInstance: SessionStore | undefined

  constructor(
    readonly out: Output,
    /** Arguments after `--`, for the agent (`harness run -a exec -- npm test`). */
    readonly passthrough: string[] = [],
    readonly cwd: string = process.cwd(),
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  get options(): GlobalOptions {
    return this.out.options
  }

  project(): Promise<ProjectPaths> {
    this.projectPromise ??= findProject({ cwd: this.cwd, dir: this.options.dir, env: this.env })
    return this.projectPromise
  }

  async store(): Promise<SessionStore> {
    if (this.storeInstance) return this.storeInstance
    const paths = await this.project()
    const { SessionStore } = await import('../sessions/store.js')
    this.storeInstance = new SessionStore(paths.sessionsDir, {
      warn: (problem) => this.out.warn(`${problem.path}: ${problem.reason}`),
    })
    return this.storeInstance
  }
}
