import { join } from 'node:path'
import type { HarnessConfig } from '../../config.js'
import {
  appendText,
  lstatOrNull,
  readJson,
  unlinkQuiet,
  writeFileAtomic,
  writeFileNew,
} from '../../disk/door.js'
import { durationSetting, durationText } from '../../duration.js'
import { startDetachedHarness } from '../../process/supervisor.js'
import type { ProjectPaths } from '../../project.js'
import type { SessionEnv } from '../ports.js'
import { cleanupSessions } from './cleanup.js'

/** `cleanup.auto` when the config says nothing. */
const DEFAULT_AUTO_CLEANUP = '30d'
/** In `.harness/`, not in `logs/`, where a session named `auto-cleanup` would own that name (docs/history.md). */
const AUTO_CLEANUP_LOG = 'auto-cleanup.log'
const AUTO_CLEANUP_STAMP = 'auto-cleanup.stamp'
const DAY_MS = 24 * 60 * 60 * 1000
/** A claim older than this was left by a process that died while it held it. */
const STALE_CLAIM_MS = 60 * 1000

/**
 * Whether HARNESS_AUTO_CLEANUP turns auto cleanup off for this process tree (a CI job, a test suite) that must
 * leave no background process behind.
 */
export function autoCleanupOffByEnv(env: NodeJS.ProcessEnv): boolean {
  return ['0', 'off', 'false'].includes(env.HARNESS_AUTO_CLEANUP?.toLowerCase() ?? '')
}

/** The threshold auto cleanup uses, or null when `cleanup.auto` is false. */
function autoCleanupThreshold(config: HarnessConfig): string | null {
  const auto = config.cleanup?.auto
  if (auto === false) return null
  return durationText(auto ?? DEFAULT_AUTO_CLEANUP, 'd')
}

function stampTime(path: string): number {
  try {
    const value = readJson(path, 'stamp') as { at?: unknown } | null
    return typeof value?.at === 'string' ? Date.parse(value.at) : Number.NaN
  } catch {
    return Number.NaN
  }
}

/** Due when there is no stamp, it is unreadable, a day old, or in the future (a clock set back). */
function isDue(path: string, now: number): boolean {
  const last = stampTime(path)
  return !Number.isFinite(last) || now - last >= DAY_MS || last > now
}

/**
 * Takes today's turn: true at most once a day per project, even when runs start at the same moment (an
 * exclusive claim file decides; whoever loses it skips). The stamp records when the turn was taken.
 */
function claimAutoCleanup(harnessDir: string, now: Date = new Date()): boolean {
  const stamp = join(harnessDir, AUTO_CLEANUP_STAMP)
  if (!isDue(stamp, now.getTime())) return false
  const claim = `${stamp}.claim`
  try {
    writeFileNew(claim, String(process.pid))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const held = lstatOrNull(claim)
      // A claim is a plain file; a link or anything else planted there is removed (never followed) and retried tomorrow.
      if (held && (!held.isFile() || now.getTime() - held.mtimeMs > STALE_CLAIM_MS)) unlinkQuiet(claim)
    }
    return false
  }
  try {
    if (!isDue(stamp, now.getTime())) return false
    // An exclusive temp under a random name: a planted `auto-cleanup.stamp.<pid>.tmp` link is never written through.
    writeFileAtomic(stamp, `${JSON.stringify({ at: now.toISOString(), pid: process.pid })}\n`)
    return true
  } finally {
    unlinkQuiet(claim)
  }
}

/**
 * Called by `run` once its own session is on record: when `cleanup.auto` is on and today's turn is free,
 * starts `harness __auto-cleanup` detached and niced, and returns at once. Never fails the run.
 */
export async function maybeStartAutoCleanup(
  ctx: SessionEnv,
  paths: ProjectPaths,
  config: HarnessConfig,
): Promise<void> {
  try {
    const threshold = autoCleanupThreshold(config)
    if (threshold === null || autoCleanupOffByEnv(ctx.env) || !claimAutoCleanup(paths.harnessDir)) return
    const child = await startDetachedHarness(
      ['--dir', paths.root, '__auto-cleanup', '--older-than', threshold],
      ctx.env,
      paths.root,
      { lowPriority: true },
    )
    child.abandon()
  } catch {
    // Housekeeping is never worth a failed run; the next day's run tries again.
  }
}

/** The background half: `session cleanup --older-than <threshold>` with its outcome appended to the log. */
export async function runAutoCleanup(ctx: SessionEnv, olderThan: string): Promise<void> {
  const paths = await ctx.project()
  const log = join(paths.harnessDir, AUTO_CLEANUP_LOG)
  const write = (line: string) => appendText(log, `${new Date().toISOString()} ${line}\n`)
  try {
    write(`auto cleanup (older than ${olderThan}) started, pid ${process.pid}`)
    const report = await cleanupSessions(ctx, {
      olderThan: durationSetting(olderThan, { bareUnit: 'd' }),
      force: false,
      dryRun: false,
    })
    for (const s of report.removed) {
      const what = [s.worktree && 'worktree', s.branch && `branch ${s.branch.name}`, s.log && 'log', 'record']
      write(
        `removed ${s.id} (${s.status}, last active ${s.last_active_at}): ${what.filter(Boolean).join(', ')}`,
      )
    }
    for (const s of report.kept) {
      write(`kept ${s.id} (${s.status}): ${s.reasons.map((r) => `${r.code}: ${r.message}`).join('; ')}`)
    }
    write(`done: removed ${report.removed.length}, kept ${report.kept.length}`)
  } catch (error) {
    write(`failed: ${error instanceof Error ? error.message : String(error)}`)
    throw error
  }
}
