import { EventEmitter } from 'node:events'
import { basename, join } from 'node:path'
import { backendNameOr } from '../backend-names.js'
import { watchDir } from '../disk/door.js'
import { HARNESS_DIR_NAME, pathsFor } from '../project.js'
import { terminalSafe, terminalSafeLine } from '../render/safe.js'
import { relativeTime } from '../render/time.js'
import type {
  ActionResult,
  DashboardDetail,
  DashboardPort,
  DashboardSession,
  Listing,
  LogResult,
  MergePreview,
  NewSession,
  TextResult,
} from '../ui/port.js'
import { dashboardSession } from '../ui/rows.js'
import { Context } from './context.js'
import type { OutStream } from './fd-writer.js'
import type { CliIo } from './io.js'
import { formatError, Output } from './output.js'

/**
 * The dashboard's port (ui/port.ts) over the services the commands call, with the same confirmations and errors:
 * `k` is `session kill`, `m` is `session merge --dry-run` then `session merge`, `n` is `run --detach` or
 * `run --tmux`, and so on. Each action runs against a Context of its own whose output is caught, so what a
 * command would print (its notices, warnings and errors, in the command's own words) becomes the dashboard's
 * message instead of writing over the screen.
 */

/** How long kill and pause give the agent between SIGTERM and SIGKILL: the commands' default `--grace`. */
const GRACE_MS = 1500
/** How much of a log's end the pane and the pager read. */
const LOG_TAIL_BYTES = 512 * 1024
/** How often the sessions are read again where the folder cannot be watched. */
const POLL_MS = 1000

/** An output stream that keeps what is written (a command's stdout and stderr inside the dashboard). */
class CaughtText extends EventEmitter implements OutStream {
  readonly isTTY = false
  readonly columns = undefined
  text = ''
  write(chunk: string | Uint8Array): boolean {
    this.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
    return true
  }
}

export interface DashboardOptions {
  io: Pick<CliIo, 'cwd' | 'env' | 'stdin' | 'stdinIsTerminal'>
  /** The command's own output: its global flags (--dir, --no-color) and colour decision. */
  out: Output
  allProjects: boolean
  agents: string[]
  backends: string[]
}

export class CliDashboard implements DashboardPort {
  readonly allProjects: boolean
  readonly color: boolean
  readonly agents: string[]
  readonly backends: string[]
  title: string

  constructor(private readonly options: DashboardOptions) {
    this.allProjects = options.allProjects
    this.color = options.out.color
    this.agents = options.agents
    this.backends = options.backends
    this.title = options.allProjects ? 'all projects' : ''
  }

  /** A Context for one action: the project's, its output caught. */
  private context(projectDir: string | null = null): { ctx: Context; caught: CaughtText } {
    const caught = new CaughtText()
    const { dir, color: _color, ...rest } = this.options.out.options
    const out = new Output(
      { ...rest, dir: projectDir ?? dir, json: false, color: false },
      caught,
      caught,
      this.options.io.env,
    )
    return { ctx: new Context(out, [], this.options.io), caught }
  }

  /** Finds the project (its folder for the title) before the first frame; a project error ends `ui` as any command's would. */
  async open(): Promise<void> {
    if (this.allProjects) return
    const { ctx } = this.context(this.options.out.options.dir ?? null)
    const paths = await ctx.project()
    this.title = terminalSafeLine(basename(paths.root))
  }

  async sessions(): Promise<Listing> {
    const { ctx, caught } = this.context(this.options.out.options.dir ?? null)
    const warnings: string[] = []
    let sessions: DashboardSession[] = []
    try {
      const paths = await ctx.project()
      if (this.allProjects) {
        const { listAllProjects } = await ctx.services.allProjects()
        const { projectLabel } = (await ctx.services.reading()).renderSession
        const views = await listAllProjects(ctx, { sort: 'created' })
        sessions = views.map((view) =>
          dashboardSession(view, {
            label: projectLabel(view.project_dir, ctx.env.HOME),
            dir: view.project_dir,
          }),
        )
        this.watchFolders([paths.sessionsDir, ...views.map((v) => sessionsDirOf(v.project_dir))])
      } else if (paths.exists) {
        const { listSessions } = (await ctx.services.reading()).query
        for await (const view of listSessions(ctx, { sort: 'created' })) sessions.push(dashboardSession(view))
        this.watchFolders([paths.sessionsDir])
      } else this.watchFolders([paths.sessionsDir])
    } catch (error) {
      warnings.push(errorText(error))
    }
    warnings.push(...lines(caught.text))
    return { sessions, warnings }
  }

  /** Where `watch` listens; the listing adds the folders of projects as they appear. */
  private folders = new Map<string, { close(): void } | null>()
  private changed: (() => void) | undefined
  private poller: ReturnType<typeof setInterval> | undefined

  private watchFolders(dirs: string[]): void {
    for (const dir of new Set(dirs)) {
      if (this.folders.has(dir)) continue
      this.folders.set(dir, null)
      if (this.changed) this.startWatching(dir)
    }
  }

  private startWatching(dir: string): void {
    const changed = this.changed
    if (!changed) return
    try {
      const watcher = watchDir(dir, changed)
      watcher.on('error', () => this.poll())
      this.folders.set(dir, watcher)
    } catch {
      // No sessions folder yet, or no watching on this file system: look every second instead.
      this.poll()
    }
  }

  private poll(): void {
    const changed = this.changed
    if (changed) this.poller ??= setInterval(changed, POLL_MS)
  }

  watch(onChange: () => void): () => void {
    let pending: ReturnType<typeof setTimeout> | undefined
    // A burst of writes (a record's temp file, its rename, its lock) is one change.
    this.changed = () => {
      pending ??= setTimeout(() => {
        pending = undefined
        onChange()
      }, 30)
    }
    for (const [dir, watcher] of this.folders) if (!watcher) this.startWatching(dir)
    return () => {
      this.changed = undefined
      for (const watcher of this.folders.values()) watcher?.close()
      this.folders.clear()
      if (this.poller) clearInterval(this.poller)
      if (pending) clearTimeout(pending)
    }
  }

  async detail(session: DashboardSession): Promise<DashboardDetail> {
    const [diff, log, checkpoints] = await Promise.all([
      this.diffStat(session),
      this.log(session, 8),
      this.checkpoints(session),
    ])
    return { id: session.id, diff, log: log.ok ? log.lines : [firstLine(log.error)], checkpoints }
  }

  private async diffStat(session: DashboardSession): Promise<string[]> {
    const { ctx } = this.context(session.projectDir)
    try {
      const { diffSession } = (await ctx.services.work()).diff
      const result = await diffSession(ctx, session.id, 'stat')
      const stat = lines(terminalSafe(result.stat ?? ''))
      // Its summary first ("2 files changed, …"): the pane may have room for one line.
      return stat.length ? [...stat.slice(-1), ...stat.slice(0, -1)] : ['no changes']
    } catch (error) {
      return [firstLine(errorText(error))]
    }
  }

  private async checkpoints(session: DashboardSession): Promise<string[]> {
    const { ctx } = this.context(session.projectDir)
    try {
      const { listSessionCheckpoints } = (await ctx.services.work()).workCheckpoints
      const list = await listSessionCheckpoints(ctx, session.id)
      if (list.checkpoints.length === 0) return ['none']
      const now = new Date(ctx.clock.now())
      // Newest first, one line each: what `session checkpoints` shows, in the pane's room.
      return [...list.checkpoints]
        .reverse()
        .map((c) =>
          terminalSafeLine(
            `${c.n}  ${relativeTime(c.created_at, now)}  ${c.trigger ?? '-'}  ${c.files_changed ?? '-'} files  ${c.message ?? ''}`.trimEnd(),
          ),
        )
    } catch (error) {
      return [firstLine(errorText(error))]
    }
  }

  async log(session: DashboardSession, count: number): Promise<LogResult> {
    const { ctx } = this.context(session.projectDir)
    try {
      const { logTail, sessionLog } = (await ctx.services.logs()).logs
      const { LogRenderer } = (await ctx.services.logs()).renderLogStream
      const info = await sessionLog(ctx, session.id)
      const { bytes, position } = logTail(info, LOG_TAIL_BYTES)
      let text = ''
      const renderer = new LogRenderer((t) => (text += t), false, undefined, info.terminal)
      renderer.setRuns(info.runs.filter((run) => run.log_offset >= position))
      renderer.feed(bytes, position)
      renderer.finish(position + bytes.length)
      const { getSession } = (await ctx.services.reading()).query
      const now = await getSession(ctx, session.id)
      const shown = lines(terminalSafe(text)).slice(-count)
      return {
        ok: true,
        lines: shown.length ? shown : ['(the log is empty)'],
        running: now.status === 'RUNNING',
      }
    } catch (error) {
      return { ok: false, error: errorText(error) }
    }
  }

  async diff(session: DashboardSession): Promise<TextResult> {
    return this.attempt(session, async (ctx) => {
      const { diffSession } = (await ctx.services.work()).diff
      const result = await diffSession(ctx, session.id, 'patch')
      const body = lines(terminalSafe(result.diff ?? ''))
      const files = `${result.files.length} ${result.files.length === 1 ? 'file' : 'files'}`
      return {
        ok: true,
        title: `diff of ${session.id} against ${result.base_commit.slice(0, 12)} (${files})`,
        lines: body.length ? body : ['no changes'],
      }
    })
  }

  async stop(session: DashboardSession, verb: 'kill' | 'pause'): Promise<ActionResult> {
    return this.action(session, async (ctx) => {
      const { stopSession, stopNotProduced } = (await ctx.services.control()).controlStop
      const { renderStopResult } = (await ctx.services.control()).renderRun
      const result = await stopSession(ctx, session.id, verb, GRACE_MS)
      if (!result.produced) throw stopNotProduced(result)
      return renderStopResult(result)
    })
  }

  async resume(session: DashboardSession): Promise<ActionResult> {
    return this.action(session, async (ctx) => {
      const { resumeSession } = (await ctx.services.run()).start
      const { runSummary } = (await ctx.services.control()).renderRun
      // Never in the dashboard's own terminal: into tmux where it last ran, else in the background.
      const tmux = session.tmux
      const outcome = await resumeSession(ctx, session.id, [], { detach: !tmux, tmux })
      return runSummary(outcome.record)
    })
  }

  async mergePreview(session: DashboardSession): Promise<MergePreview> {
    return this.attempt(session, async (ctx) => {
      const { mergeSession } = (await ctx.services.work()).workMerge
      const { renderMerge } = (await ctx.services.work()).renderMerge
      const result = await mergeSession(ctx, session.id, { dryRun: true })
      return {
        ok: true,
        lines: lines(terminalSafe(renderMerge(result))),
        canMerge: result.outcome === 'would-merge',
      }
    })
  }

  async merge(session: DashboardSession): Promise<ActionResult> {
    return this.action(session, async (ctx) => {
      const { mergeSession } = (await ctx.services.work()).workMerge
      const { renderMerge } = (await ctx.services.work()).renderMerge
      const result = await mergeSession(ctx, session.id, {})
      const text = renderMerge(result)
      if (result.outcome === 'refused') throw new RefusedText(text)
      return text
    })
  }

  async send(session: DashboardSession, text: string): Promise<ActionResult> {
    return this.action(session, async (ctx) => {
      const { sendToSession } = (await ctx.services.control()).send
      const { renderSend } = (await ctx.services.control()).renderRun
      return renderSend(await sendToSession(ctx, session.id, text))
    })
  }

  async start(request: NewSession): Promise<ActionResult> {
    // In this project (the one found from --dir or the current directory), with --all-projects too.
    const { ctx, caught } = this.context(this.options.out.options.dir ?? null)
    try {
      const { startSession } = (await ctx.services.run()).start
      const { runSummary } = (await ctx.services.control()).renderRun
      const outcome = await startSession(ctx, {
        agent: request.agent,
        prompt: [request.task],
        worktree: true,
        // Never in the dashboard's own terminal.
        detach: request.host === 'detached',
        tmux: request.host === 'tmux',
        extraArgs: [],
        backend: backendNameOr(request.backend),
      })
      return ok(caught, runSummary(outcome.record))
    } catch (error) {
      return { ok: false, error: errorText(error, caught) }
    }
  }

  async attach(session: DashboardSession): Promise<ActionResult> {
    return this.action(session, async (ctx) => {
      const { attachSession } = (await ctx.services.control()).attach
      const { statusLabel } = (await ctx.services.reading()).renderSession
      const view = await attachSession(ctx, session.id)
      return `detached from ${view.id} (${statusLabel(view)})`
    })
  }

  /** An action in the session's project: what it printed and its result, or its error as the command shows it. */
  private async action(
    session: DashboardSession,
    work: (ctx: Context) => Promise<string>,
  ): Promise<ActionResult> {
    const { ctx, caught } = this.context(session.projectDir)
    try {
      return ok(caught, await work(ctx))
    } catch (error) {
      return { ok: false, error: errorText(error, caught) }
    }
  }

  private async attempt<T extends { ok: true }>(
    session: DashboardSession,
    work: (ctx: Context) => Promise<T>,
  ): Promise<T | { ok: false; error: string }> {
    const { ctx, caught } = this.context(session.projectDir)
    try {
      return await work(ctx)
    } catch (error) {
      return { ok: false, error: errorText(error, caught) }
    }
  }
}

/** A refused merge: its report is the error. */
class RefusedText extends Error {}

function ok(caught: CaughtText, message: string): ActionResult {
  return { ok: true, message: terminalSafe([...lines(caught.text), message].join('\n')) }
}

/** An error as the command prints it (`harness: …` and its hint), after what the action printed before it. */
function errorText(error: unknown, caught?: CaughtText): string {
  const text =
    error instanceof RefusedText ? terminalSafe(error.message) : formatError(error, false).text.trimEnd()
  return [...lines(caught?.text ?? ''), text].join('\n')
}

/** The lines of a text, without the blank ones at its ends. */
function lines(text: string): string[] {
  const all = text.split('\n').map((l) => l.trimEnd())
  while (all.length && all[0] === '') all.shift()
  while (all.length && all[all.length - 1] === '') all.pop()
  return all
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? ''
}

function sessionsDirOf(projectDir: string): string {
  return pathsFor(join(projectDir, HARNESS_DIR_NAME)).sessionsDir
}
