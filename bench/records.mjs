// Generates a project full of realistic session records (README.md, "The session record"), the same ones on every run (seeded).
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Small seeded generator (mulberry32): the same records every run, so runs compare. */
function random(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const PROVIDERS = ['claude', 'claude', 'claude', 'codex', 'gemini', 'opencode', 'aider']
const MODELS = {
  claude: 'sonnet',
  codex: 'gpt-5-codex',
  gemini: 'gemini-2.5-pro',
  opencode: null,
  aider: null,
}
// Weights: mostly finished work, some paused; no RUNNING (see docs/performance.md).
const STATUSES = [
  ['COMPLETED', 0.55],
  ['FAILED', 0.15],
  ['KILLED', 0.1],
  ['PAUSED', 0.2],
]
const WORDS =
  'add auth endpoints fix flaky test refactor the session store migrate config to zod update docs for the CLI ' +
  'write integration tests for the REST API and make sure error handling covers timeouts retries and bad input'

/** `seal` (bench/seal.mjs) seals each record as harness would; without it the records are foreign. */
export function writeProject(projectDir, count, seed = 42, seal = (record) => record) {
  const next = random(seed)
  const pick = (list) => list[Math.floor(next() * list.length)]
  const hex = (n) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join('')
  const words = WORDS.split(' ')
  const sessionsDir = join(projectDir, '.harness', 'sessions')
  mkdirSync(sessionsDir, { recursive: true, mode: 0o700 })
  const ids = new Set()
  const now = Date.UTC(2026, 8, 24, 18)
  const records = []
  while (ids.size < count) {
    const id = hex(8)
    if (ids.has(id)) continue
    ids.add(id)
    const record = makeRecord({ id, projectDir, next, pick, hex, words, now })
    const sealed = seal(record, projectDir)
    // Keys in canonical order at every level, as the store writes a record (record/store.ts, serialize).
    writeFileSync(join(sessionsDir, `${id}.json`), `${JSON.stringify(sortedKeys(sealed), null, 2)}\n`, {
      mode: 0o600,
    })
    records.push(sealed)
  }
  return { sessionsDir, records }
}

/** `value` with the keys of every object in sorted order. */
function sortedKeys(value) {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys(value[key])]),
  )
}

function makeRecord({ id, projectDir, next, pick, hex, words, now }) {
  const provider = pick(PROVIDERS)
  let roll = next()
  let status = 'COMPLETED'
  for (const [name, weight] of STATUSES) {
    if (roll < weight) {
      status = name
      break
    }
    roll -= weight
  }
  const prompt = Array.from({ length: 6 + Math.floor(next() * 60) }, () => pick(words)).join(' ')
  const created = now - Math.floor(next() * 60 * 24 * 3600 * 1000)
  const runCount = 1 + Math.floor(next() * 3)
  const runs = []
  let at = created
  for (let n = 1; n <= runCount; n++) {
    const pid = 1000 + Math.floor(next() * 400000)
    const started = at
    const ended = started + Math.floor(next() * 3600 * 1000)
    at = ended + Math.floor(next() * 3600 * 1000)
    const last = n === runCount
    const exitCode = last
      ? { COMPLETED: 0, FAILED: 1, KILLED: null, PAUSED: null }[status]
      : pick([0, 0, 1, null])
    runs.push({
      n,
      kind: n === 1 ? 'start' : 'resume',
      pid,
      pid_start_time: String(100000 + Math.floor(next() * 9e6)),
      supervisor_pid: pid - 3,
      supervisor_start_time: String(100000 + Math.floor(next() * 9e6)),
      args:
        n === 1
          ? ['-p', prompt, '--session-id', `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`]
          : ['--resume'],
      started_at: new Date(started).toISOString(),
      ended_at: new Date(ended).toISOString(),
      exit_code: exitCode,
      signal: last && status === 'KILLED' ? 'SIGTERM' : null,
      hostname: 'devbox',
      boot_id: '6c1e1f0e-8a43-4b53-9d35-2f1f0b7f5d10',
      pid_namespace: 'pid:[4026531836]',
      detached: next() < 0.3,
    })
  }
  const lastRun = runs[runs.length - 1]
  const checkpoints = Array.from({ length: Math.floor(next() * 3) }, (_, i) => ({
    n: i + 1,
    ref: `refs/harness/${id}/checkpoints/${i + 1}`,
    commit: hex(40),
    message: i === 0 ? 'auto: run ended with changes' : 'before refactor',
    created_at: lastRun.ended_at,
  }))
  const stopped = status === 'KILLED' || status === 'PAUSED'
  return {
    id,
    provider,
    permission: pick(['supervised', 'supervised', 'autonomous', 'readonly']),
    status,
    worktree_dir: join(projectDir, '.harness', 'worktrees', id),
    is_worktree: true,
    git_branch: `harness/${id}`,
    base_dir: projectDir,
    pid: lastRun.pid,
    exit_code: lastRun.exit_code,
    prompt,
    created_at: new Date(created).toISOString(),
    updated_at: lastRun.ended_at,
    completed_at: status === 'PAUSED' ? null : lastRun.ended_at,
    schema_version: 1,
    rev: 2 + runCount * 2,
    model: MODELS[provider],
    task_hash: `sha256:${createHash('sha256').update(prompt).digest('hex')}`,
    base_commit: hex(40),
    agent_session_id:
      provider === 'claude' || provider === 'gemini'
        ? `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`
        : null,
    stop_reason: stopped ? (status === 'KILLED' ? 'killed' : pick(['paused', 'interrupted'])) : null,
    stop_request: stopped
      ? { action: status === 'KILLED' ? 'kill' : 'pause', at: lastRun.ended_at, by_pid: 4242 }
      : null,
    runs,
    checkpoints,
    files_modified: Array.from(
      { length: Math.floor(next() * 9) },
      () => `src/${pick(words)}/${pick(words)}.ts`,
    ),
    metadata: {
      os: 'linux',
      hostname: 'devbox',
      pid_namespace: 'pid:[4026531836]',
      boot_id: '6c1e1f0e-8a43-4b53-9d35-2f1f0b7f5d10',
      harness_version: '0.1.0',
      node_version: 'v20.17.0',
    },
  }
}
