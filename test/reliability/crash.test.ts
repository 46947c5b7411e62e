import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { parseSessionRecord } from '../../src/sessions/record/schema.js'
import { SessionStore } from '../../src/sessions/record/store.js'
import { sessionRecord, testSealer } from '../fixtures/records.js'
import { bundleStoreWorker, Worker } from '../fixtures/workers.js'
import { tmpDir } from '../helpers/tmp.js'

/**
 * A writer is SIGKILLed at random instants while it rewrites records; after each kill every record must be
 * whole and valid, and the store usable at once. The same harness run against a naive writer (writeFileSync
 * onto the record) must catch a torn record, which shows that the check can see one.
 */

const IDS = ['crash001', 'crash002', 'crash003']
/** Generous: breaking a dead writer's lock takes a few milliseconds. */

let bundle: string

beforeAll(async () => {
  bundle = await bundleStoreWorker(tmpDir())
})

interface Round {
  failures: string[]
  slowestUpdateMs: number
  /** The writer died holding a lock or with a temp file: inside a write, not between two. */
  midWrite: boolean
}

async function setUp(): Promise<{ dir: string; store: SessionStore }> {
  const dir = join(tmpDir(), 'sessions')
  const store = new SessionStore(dir, { sealer: testSealer() })
  for (const id of IDS) await store.create(sessionRecord(id, { payload: '', payload_len: 0 }))
  return { dir, store }
}

/** Everything that must hold right after a writer died, as a list of what does not. */
async function check(dir: string, store: SessionStore, lastRev: Map<string, number>): Promise<Round> {
  const failures: string[] = []
  for (const id of IDS) {
    const path = join(dir, `${id}.json`)
    let value: Record<string, unknown>
    try {
      value = JSON.parse(readFileSync(path, 'utf8'))
    } catch (error) {
      failures.push(`${id}: ${(error as Error).message}`)
      continue
    }
    const parsed = parseSessionRecord(value)
    if (!parsed.ok) failures.push(`${id}: invalid: ${parsed.reason}`)
    if (typeof value.payload !== 'string' || value.payload.length !== value.payload_len)
      failures.push(`${id}: payload does not match its length`)
    const rev = Number(value.rev)
    if (rev < (lastRev.get(id) ?? 0)) failures.push(`${id}: rev went back from ${lastRev.get(id)} to ${rev}`)
    lastRev.set(id, rev)
  }
  if (failures.length > 0) return { failures, slowestUpdateMs: 0, midWrite: false }
  const midWrite = readdirSync(dir).some((name) => !IDS.some((id) => name === `${id}.json`))

  // Usable at once: the dead writer may have held any record's lock and left temp files behind.
  let slowestUpdateMs = 0
  for (const id of IDS) {
    const started = performance.now()
    try {
      const next = await store.update(id, (r) => ({ ...r, checked: Number(r.checked ?? 0) + 1 }))
      lastRev.set(id, next.rev ?? 0)
    } catch (error) {
      failures.push(`${id}: update failed: ${(error as Error).message}`)
    }
    slowestUpdateMs = Math.max(slowestUpdateMs, performance.now() - started)
  }
  // Those updates swept every leftover and released their locks.
  const extra = readdirSync(dir).filter((name) => !IDS.some((id) => name === `${id}.json`))
  if (extra.length > 0) failures.push(`left behind: ${extra.join(', ')}`)
  return { failures, slowestUpdateMs, midWrite }
}

/** Starts `mode` writers one after another, kills each at a random instant, and checks after each kill. */
async function killLoop(
  mode: 'rewrite' | 'naive',
  kills: number,
  options: { stopAtFirstFailure: boolean },
): Promise<{ failures: string[]; slowestUpdateMs: number; kills: number; midWriteKills: number }> {
  const { dir, store } = await setUp()
  const lastRev = new Map<string, number>()
  const failures: string[] = []
  let slowestUpdateMs = 0
  let midWriteKills = 0
  let done = 0
  // The next writer starts (node, bundle) while the current one runs; it touches nothing before `go`.
  let next = new Worker(bundle, [mode, dir, ...IDS])
  try {
    for (; done < kills; done++) {
      const worker = next
      await worker.waitForLine('ready')
      worker.go()
      await worker.waitForLine('writing')
      next = new Worker(bundle, [mode, dir, ...IDS])
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 35))
      const exit = await worker.kill()
      if (exit.signal !== 'SIGKILL')
        throw new Error(`writer ended by itself (${exit.code}):\n${worker.stderr}`)
      const round = await check(dir, store, lastRev)
      slowestUpdateMs = Math.max(slowestUpdateMs, round.slowestUpdateMs)
      if (round.midWrite) midWriteKills++
      failures.push(...round.failures.map((f) => `kill ${done + 1}: ${f}`))
      if (round.failures.length > 0 && options.stopAtFirstFailure)
        return { failures, slowestUpdateMs, kills: done + 1, midWriteKills }
    }
    return { failures, slowestUpdateMs, kills: done, midWriteKills }
  } finally {
    await next.kill()
  }
}

/**
 * Kills per test: 30 by default, more for a soak run (`HARNESS_CRASH_KILLS=500 npx vitest run
 * test/reliability/crash.test.ts`). 30 is plenty to catch a writer that can tear a record: the naive writer below
 * leaves a torn record after almost every kill (36 to 40 of 40 kills, in five runs of 40 on a loaded 2-core
 * machine), so the control is caught at its first or second kill. Each kill costs one node start.
 */
const KILLS = Math.max(10, Number(process.env.HARNESS_CRASH_KILLS) || 30)

describe('crash safety under SIGKILL', () => {
  // About 10 s on an idle 2-core machine; the ceiling leaves room for other suites running beside it.
  // "Usable at once" is shown by the updates after each kill succeeding: the lock is never broken by age.
  it(`records written through the store survive ${KILLS} random kills whole, and stay usable`, {
    timeout: 600_000,
  }, async () => {
    const result = await killLoop('rewrite', KILLS, { stopAtFirstFailure: false })
    expect(result.failures).toEqual([])
    expect(result.kills).toBe(KILLS)
    // Most kills land inside a write (the writer spends most of its time there), which is the point.
    expect(result.midWriteKills, 'kills that landed inside a write').toBeGreaterThan(KILLS / 4)
  })

  it('the same check catches the torn records of a naive writer, within as many kills', async () => {
    const result = await killLoop('naive', KILLS, { stopAtFirstFailure: true })
    expect(result.failures.length).toBeGreaterThan(0)
    expect(result.failures[0]).toMatch(/JSON|invalid|payload|rev went back/)
  })
})
