// The generated record stores both bench/run.mjs and bench/hyperfine.mjs time against: the same seeded records
// every run, kept between runs under the system's temporary folder (100,000 records take a minute to write).
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeProject } from './records.mjs'
import { sealerFor } from './seal.mjs'

export const STORES = join(tmpdir(), 'harness-bench-stores-v3')
/** Where harness finds the key the records are sealed with (through XDG_STATE_HOME). */
export const STATE_HOME = join(STORES, 'state')

/** `{ [count]: { dir, sessionsDir } }` for each count, writing the stores that are not there yet. */
export function prepareStores(counts, log = (line) => process.stderr.write(`${line}\n`)) {
  const seal = sealerFor(STATE_HOME)
  const projects = {}
  for (const count of counts) {
    const dir = join(STORES, `project-${count}`)
    const sessionsDir = join(dir, '.harness', 'sessions')
    const done = join(dir, 'complete')
    if (!existsSync(done)) {
      log(`writing ${count.toLocaleString('en')} records (kept in ${STORES})…`)
      rmSync(dir, { recursive: true, force: true })
      writeProject(dir, count, 42, seal)
      writeFileSync(done, `${count}\n`)
    }
    projects[count] = { dir, sessionsDir }
  }
  return { projects, seal }
}

/** The value of `--name value` on the command line, or undefined. */
export function option(name) {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? process.argv[at + 1] : undefined
}
