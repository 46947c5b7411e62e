// Shared helpers for bench/run.mjs: timing child processes, medians, sections and the result table.
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * Runs a command once, stdout to /dev/null, and returns the wall time in milliseconds from spawn to exit. A
 * non-zero exit (or any stderr output) is an error: a benchmark of a failing command measures nothing.
 * Not a pipe drained by this process: its event loop reading 64 KB at a time was the slowest part of a
 * listing of 10,000 records (32 MB), for harness and its floor alike, which pulled their ratio towards 1 (the
 * bench said 1.23-1.32x where hyperfine, writing to /dev/null as it does by default, said 2.5x). Nor an
 * asynchronous spawn with stderr through a pipe: that cost a millisecond more than hyperfine's own spawn, a
 * tenth of the native executable's `session path`; a synchronous spawn with stderr to a file costs what
 * hyperfine's does (/bin/true: 1.6 ms both).
 */
export function timeCommand({ command, args: given, cwd, env }, run = 0) {
  // `args` may be a function of the run's number, for commands that must differ each time (new worktrees).
  const args = typeof given === 'function' ? given(run) : given
  const errors = join(tmpdir(), `harness-bench-stderr-${process.pid}`)
  const fd = openSync(errors, 'w+')
  try {
    const started = performance.now()
    const result = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'ignore', fd] })
    const ms = performance.now() - started
    const stderr = readFileSync(errors, 'utf8')
    if (result.error) throw result.error
    if (result.status !== 0 || stderr) {
      throw new Error(
        `${command} ${args.join(' ')} failed (${result.status ?? result.signal}): ${stderr.trim()}`,
      )
    }
    return ms
  } finally {
    closeSync(fd)
    rmSync(errors, { force: true })
  }
}

/**
 * How many entries the JSON array a command prints has, for checking that a listing printed every record. The
 * output goes to a file and is parsed in a child: 100,000 records parsed here left this process's heap so large
 * that each later spawn (a fork of it) cost about 40 ms more, which pulled every short ratio after it towards 1.
 */
export function printedCount({ command, args, cwd, env }) {
  const file = join(tmpdir(), `harness-bench-printed-${process.pid}`)
  const fd = openSync(file, 'w')
  try {
    const run = spawnSync(command, typeof args === 'function' ? args(0) : args, {
      cwd,
      env,
      stdio: ['ignore', fd, 'inherit'],
    })
    if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${run.status ?? run.signal})`)
    const count = spawnSync(
      process.execPath,
      [
        '-e',
        'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).length))',
        file,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    )
    return Number(count.stdout)
  } finally {
    closeSync(fd)
    rmSync(file, { force: true })
  }
}

/** Runs a command once and returns its stdout, for checking that a benchmarked command does its job. */
export function output({ command, args, cwd, env }) {
  if (typeof args === 'function') args = args(0)
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] })
    const chunks = []
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`exit ${code}`)),
    )
  })
}

/**
 * Times a command (`{ command, args, cwd, env }`) against its floor (the same, plus a `label`), alternating
 * the two so that background load drifts into both alike: `block` runs of one, then `block` of the other. A
 * block of 1 runs each side cold after the other (a 100 ms node between two 40 ms harness runs left harness's
 * caches cold and added 10 ms to it); start-up rows use blocks, as a script calling harness in a loop does, and
 * as hyperfine times (bench/hyperfine.mjs alternates blocks of runs the same way).
 * Warm-up runs (not counted) fill the page cache and the module compile cache.
 */
export async function compare({ label, subject, floor, runs, warmup = 2, block = 1, aim, aimOverheadMs }) {
  let n = 0
  for (let i = 0; i < warmup; i++, n++) {
    await timeCommand(subject, n)
    await timeCommand(floor, n)
  }
  const subjectMs = []
  const floorMs = []
  while (subjectMs.length < runs) {
    const size = Math.min(block, runs - subjectMs.length)
    for (let i = 0; i < size; i++) subjectMs.push(await timeCommand(subject, n + i))
    for (let i = 0; i < size; i++) floorMs.push(await timeCommand(floor, n + i))
    n += size
  }
  const row = {
    label,
    runs,
    median: median(subjectMs),
    min: Math.min(...subjectMs),
    max: Math.max(...subjectMs),
    floorLabel: floor.label,
    floorMedian: median(floorMs),
    aim,
    aimOverheadMs,
  }
  row.ratio = row.median / row.floorMedian
  results.push(row)
  return row
}

const results = []

/**
 * Peak resident memory of one run of a command, in MB (Linux: GNU time's maximum RSS), or null where that
 * cannot be measured. A separate run, so that the timed runs are not slowed by the measuring.
 */
export async function peakRssMb({ command, args, cwd, env }) {
  if (process.platform !== 'linux' || !existsSync('/usr/bin/time')) return null
  const file = join(tmpdir(), `harness-bench-rss-${process.pid}`)
  try {
    // Its output goes nowhere: a listing of 100,000 records held here would bloat this process (printedCount).
    const run = spawnSync('/usr/bin/time', ['-f', '%M', '-o', file, command, ...args], {
      cwd,
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${run.status ?? run.signal})`)
    return Number(readFileSync(file, 'utf8').trim().split('\n').pop()) / 1024
  } finally {
    rmSync(file, { force: true })
  }
}

/** One timed run against a floor measured elsewhere (e.g. the same work done by git alone). */
export function recordComparison({ label, ms, floorLabel, floorMs, aim, runs = 1, min = ms, max = ms }) {
  const row = { label, runs, median: ms, min, max, floorLabel, floorMedian: floorMs, aim }
  row.ratio = ms / floorMs
  results.push(row)
  return row
}

/** A measurement with no floor (e.g. a latency), judged against an absolute aim in milliseconds. */
export function recordSamples({ label, samples, aimMs, note = '-' }) {
  const row = {
    label,
    runs: samples.length,
    median: median(samples),
    min: Math.min(...samples),
    max: Math.max(...samples),
    floorLabel: note,
    floorMedian: Number.NaN,
    ratio: Number.NaN,
    aimMs,
  }
  results.push(row)
  return row
}

/** A memory figure (MB, in the peak column), judged against an aim in MB; no time. */
export function recordMemory({ label, mb, aimMb, note = '-' }) {
  const row = {
    label,
    runs: 1,
    median: Number.NaN,
    min: Number.NaN,
    max: Number.NaN,
    floorLabel: note,
    floorMedian: Number.NaN,
    ratio: Number.NaN,
    peakMb: mb,
    aimMemoryMb: aimMb,
  }
  results.push(row)
  return row
}

/** A named group of benchmarks; its rows are printed as they finish and again in the final table. */
export async function section(name, fn) {
  // `node bench/run.mjs --only start-up,liveness` runs just those sections.
  const only = process.argv.indexOf('--only')
  if (only >= 0 && !(process.argv[only + 1] ?? '').split(',').includes(name)) return
  process.stderr.write(`\n== ${name}\n`)
  const first = results.length
  const started = performance.now()
  await fn()
  for (const row of results.slice(first)) row.section = name
  process.stderr.write(`   (${((performance.now() - started) / 1000).toFixed(1)} s)\n`)
}

export function machineFacts() {
  const cpu = cpus()
  return {
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    os: `${process.platform} ${release().split('-')[0]}`,
    load: loadavg()
      .map((n) => n.toFixed(2))
      .join(' '),
  }
}

const fmt = (ms) => ms.toFixed(1)
const fmtMb = (mb) => (mb === null || mb === undefined ? 'n/a' : mb < 20 ? mb.toFixed(2) : mb.toFixed(0))

function aimText(r) {
  const verdict = (ok) => (ok ? 'met' : 'MISSED')
  if (r.aim) return `≤ ${r.aim}× ${verdict(r.ratio <= r.aim)}`
  if (r.aimOverheadMs !== undefined) {
    const over = r.median - r.floorMedian
    return `≤ +${r.aimOverheadMs} ms: +${fmt(over)} ${verdict(over <= r.aimOverheadMs)}`
  }
  if (r.aimMs !== undefined) return `≤ ${r.aimMs} ms ${verdict(r.median <= r.aimMs)}`
  if (r.aimMemoryMb !== undefined) return `≤ ${r.aimMemoryMb} MB ${verdict(r.peakMb <= r.aimMemoryMb)}`
  return ''
}

export function printResults() {
  const header = [
    'section',
    'benchmark',
    'runs',
    'median ms',
    'min–max ms',
    'floor',
    'floor ms',
    'ratio',
    'aim',
    'peak MB',
  ]
  const rows = results.map((r) => [
    r.section ?? '',
    r.label,
    String(r.runs),
    Number.isNaN(r.median) ? '-' : fmt(r.median),
    Number.isNaN(r.min) ? '-' : `${fmt(r.min)}–${fmt(r.max)}`,
    r.floorLabel,
    Number.isNaN(r.floorMedian) ? '-' : fmt(r.floorMedian),
    Number.isNaN(r.ratio) ? '-' : `${r.ratio.toFixed(2)}×`,
    aimText(r),
    r.peakMb === undefined
      ? ''
      : r.aimMemoryMb !== undefined
        ? fmtMb(r.peakMb)
        : `${fmtMb(r.peakMb)} / ${fmtMb(r.floorPeakMb)}${r.aimPeakMb ? ` (≤ ${r.aimPeakMb} ${r.peakMb <= r.aimPeakMb ? 'met' : 'MISSED'})` : ''}`,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ')
  console.log(line(header))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const row of rows) console.log(line(row))
  return results
}
