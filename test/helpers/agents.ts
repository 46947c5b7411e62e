import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const FAKE_AGENT = fileURLToPath(new URL('../fixtures/agents/fake-agent.cjs', import.meta.url))
export const AGENT_NAMES = ['claude', 'codex', 'opencode', 'gemini', 'agy', 'pi', 'aider'] as const

export interface FakeAgentOptions {
  exitCode?: number
  sleepMs?: number
  ignoreTerm?: boolean
  children?: number
  output?: string
  stderr?: string
  onSigint?: boolean
  ignoreHup?: boolean
  /** Hold the terminal in raw mode: Ctrl-C exits 130, "q" exits 0, a hung-up terminal exits 1 (fake-agent.cjs). */
  raw?: boolean
  /** Draw an agent's screen; ask a question once this file exists (see fake-agent.cjs). */
  tui?: { askFile: string }
  /**
   * Stream usage as a headless agent at work (see fake-agent.cjs): claude `result` events whose running cost
   * grows by `step` dollars, or codex `turn.completed` events of `step` input and output tokens, every
   * `everyMs`, until stopped (or for `steps` steps). `honorBudget`: the claude form stops at its own
   * `--max-budget-usd`, as claude does.
   */
  stream?: { kind: 'claude' | 'codex'; step: number; everyMs?: number; steps?: number; honorBudget?: boolean }
  /** Install only these names (default: every agent), for commands that probe each agent they find. */
  names?: readonly (typeof AGENT_NAMES)[number][]
}

export interface FakeAgents {
  /** Environment that puts the fake agents first on PATH and configures them. */
  env: NodeJS.ProcessEnv
  binDir: string
  logFile: string
  /** Every line the agents logged. */
  entries: () => FakeAgentEntry[]
  starts: () => FakeAgentEntry[]
  /** Pids of every agent and grandchild that logged. */
  pids: () => number[]
}

export interface FakeAgentEntry {
  event: string
  pid: number
  name?: string
  args?: string[]
  cwd?: string
  ppid?: number
  session?: string | null
  harness_dir?: string | null
  stdin_tty?: boolean
  /** `start` events: its PWD, and the names of git's location variables it was given. */
  pwd?: string | null
  git_env?: string[]
  /** `conversation` events: the session file or chat history it was given, and what it held then. */
  file?: string
  held?: string | null
}

/** Installs the fake agent under the real agent names in `<root>/bin`. */
export function fakeAgents(
  root: string,
  baseEnv: NodeJS.ProcessEnv,
  options: FakeAgentOptions = {},
): FakeAgents {
  const binDir = join(root, 'bin')
  mkdirSync(binDir, { recursive: true })
  for (const name of options.names ?? AGENT_NAMES) {
    const link = join(binDir, name)
    if (!existsSync(link)) symlinkSync(FAKE_AGENT, link)
  }
  const logFile = join(root, 'agents.log')
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    PATH: `${binDir}${delimiter}${baseEnv.PATH ?? ''}`,
    FAKE_AGENT_LOG: logFile,
    ...agentEnv(options),
  }
  const entries = (): FakeAgentEntry[] => {
    if (!existsSync(logFile)) return []
    return readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as FakeAgentEntry)
  }
  return {
    env,
    binDir,
    logFile,
    entries,
    starts: () => entries().filter((e) => e.event === 'start'),
    pids: () => [...new Set(entries().map((e) => e.pid))],
  }
}

/** FAKE_AGENT_* variables for a given behaviour (to vary it per command). */
export function agentEnv(options: FakeAgentOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  if (options.exitCode !== undefined) env.FAKE_AGENT_EXIT = String(options.exitCode)
  if (options.sleepMs !== undefined) env.FAKE_AGENT_SLEEP_MS = String(options.sleepMs)
  if (options.ignoreTerm) env.FAKE_AGENT_IGNORE_TERM = '1'
  if (options.children) env.FAKE_AGENT_CHILDREN = String(options.children)
  if (options.output) env.FAKE_AGENT_OUTPUT = options.output
  if (options.stderr) env.FAKE_AGENT_STDERR = options.stderr
  if (options.onSigint) env.FAKE_AGENT_ON_SIGINT = '1'
  if (options.ignoreHup) env.FAKE_AGENT_IGNORE_HUP = '1'
  if (options.raw) env.FAKE_AGENT_RAW = '1'
  if (options.stream) {
    env.FAKE_AGENT_STREAM = options.stream.kind
    env.FAKE_AGENT_STREAM_STEP = String(options.stream.step)
    if (options.stream.everyMs !== undefined) env.FAKE_AGENT_STREAM_MS = String(options.stream.everyMs)
    if (options.stream.steps !== undefined) env.FAKE_AGENT_STREAM_STEPS = String(options.stream.steps)
    if (options.stream.honorBudget) env.FAKE_AGENT_HONOR_BUDGET = '1'
  }
  if (options.tui) {
    env.FAKE_AGENT_TUI = '1'
    env.FAKE_AGENT_ASK_FILE = options.tui.askFile
  }
  return env
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  // A zombie still answers signal 0; it is dead for every purpose here.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^\S+ \(.*\) [ZX]/s.test(stat)
  } catch {
    return false
  }
}
