import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterAll, type afterEach } from 'vitest'

/** A live process's start time as harness records it (`pid_start_time`): field 22 of /proc/<pid>/stat. */
export function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] as string
}

/**
 * Per file: a function that starts an unrelated live process (`sleep`) harness must never signal, and returns
 * its pid; the processes are killed after the file's tests, or after each test with `after` = afterEach.
 */
export function bystanders(after: typeof afterAll | typeof afterEach = afterAll): () => number {
  const started: ChildProcess[] = []
  after(() => {
    for (const child of started.splice(0)) child.kill('SIGKILL')
  })
  return () => {
    const child = spawn('sleep', ['300'], { stdio: 'ignore' })
    started.push(child)
    if (!child.pid) throw new Error('could not start a bystander')
    return child.pid
  }
}

/** The exit of `child`, once it has exited. */
export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
}
