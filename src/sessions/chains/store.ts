import { join } from 'node:path'
import * as z from 'zod/mini'
import {
  ensureDir,
  LIMITS,
  lstatOrNull,
  parseJson,
  readDirNames,
  readText,
  UnsafeFileError,
  unlinkQuiet,
} from '../../disk/door.js'
import { asDiskFault, fsyncDir, realFs, replaceFileDurably, writeNewFileDurably } from '../../durable.js'
import { ExitCode, HarnessError, IllegalStateError, UsageError } from '../../errors.js'
import { uniqueSuffix, withLock } from '../record/lock.js'
import { RECORD_PERMISSIONS } from '../record/schema.js'
import type { RecordSealer } from '../record/seal.js'

/** Like a session id: `<name>.json` is always a plain file name in `.harness/chains/`. */
export const CHAIN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

const TimeSchema = z.iso.datetime({ offset: true })
const opt = <T extends z.core.SomeType>(schema: T) => z.optional(z.nullable(schema))

/** One step: a prompt for a new session, or an existing session adopted with `--session`. */
export const ChainStepSchema = z.looseObject({
  n: z.number(),
  agent: opt(z.string()),
  model: opt(z.string()),
  permission: opt(z.enum(RECORD_PERMISSIONS)),
  prompt: opt(z.string()),
  extra_args: opt(z.array(z.string())),
  /** The step's session: chosen before it starts, so a crash in between starts it again under the same id. */
  session_id: opt(z.string()),
  /** Added with `--session` (or `create --sessions`): never started by the chain, only resumed. */
  adopted: opt(z.boolean()),
  added_at: TimeSchema,
  /** Set once the step's session COMPLETED: the step stays done even after cleanup removes that session. */
  completed_at: opt(TimeSchema),
  /** The commit that carried the previous step's uncommitted work onto its branch before this step began. */
  carried_commit: opt(z.string()),
})
export type ChainStep = z.infer<typeof ChainStepSchema>

/**
 * The process that runs the chain, recorded like a supervisor (docs/development/design.md, "Process
 * identity").
 */
export const ChainRunnerSchema = z.looseObject({
  pid: z.number(),
  start_time: opt(z.string()),
  hostname: opt(z.string()),
  boot_id: opt(z.string()),
  pid_namespace: opt(z.string()),
  started_at: TimeSchema,
  detached: opt(z.boolean()),
})
export type ChainRunner = z.infer<typeof ChainRunnerSchema>

export const ChainSchema = z.looseObject({
  name: z.string(),
  schema_version: opt(z.number()),
  rev: opt(z.number()),
  created_at: TimeSchema,
  updated_at: opt(TimeSchema),
  steps: z.array(ChainStepSchema),
  runner: opt(ChainRunnerSchema),
  stop_request: opt(z.looseObject({ at: TimeSchema, by_pid: opt(z.number()) })),
  /** How the last `chain run` ended: completed, stopped at a step, killed. */
  last_outcome: opt(z.string()),
  seal: opt(z.string()),
  /** Computed on every read (never trusted from the file). */
  sealed: z.optional(z.boolean()),
})
export type Chain = z.infer<typeof ChainSchema>

export class ChainNotFoundError extends HarnessError {
  constructor(name: string) {
    super('CHAIN_NOT_FOUND', `chain "${name}" not found`, ExitCode.NotFound, 'run "harness chain list"')
  }
}

export class CorruptChainError extends HarnessError {
  constructor(path: string, reason: string) {
    super(
      'CORRUPT_CHAIN',
      `corrupt chain ${path}: ${reason}`,
      ExitCode.Failure,
      'the file was left untouched',
    )
  }
}

export function assertValidChainName(name: string): string {
  if (!CHAIN_NAME_PATTERN.test(name)) {
    throw new UsageError(
      `invalid chain name "${name.slice(0, 64)}"`,
      'names are letters, digits, "_" and "-", up to 64 characters, starting with a letter or digit',
      'INVALID_CHAIN_NAME',
    )
  }
  return name
}

/** A chain harness did not seal for this user is shown, never run, extended or signalled (docs/security.md). */
export function assertSealedChain(chain: Chain): void {
  if (chain.sealed === true) return
  throw new IllegalStateError(
    `chain "${chain.name}" is foreign (not sealed by harness for this user): it is shown but never acted on`,
    `look at .harness/chains/${chain.name}.json; recreate the chain with "harness chain create" if you want it`,
    'FOREIGN',
  )
}

type Read = { kind: 'ok'; chain: Chain } | { kind: 'missing' } | { kind: 'corrupt'; reason: string }

/**
 * `.harness/chains/<name>.json`, written the way session records are (docs/development/design.md, "The record
 * store"): a fsynced temporary file renamed over the old one under the chain's lock, create by link(2),
 * sealed with the user's key. Temporary files exist only while the lock is held; the lock holder sweeps
 * leftovers.
 */
export class ChainStore {
  constructor(
    readonly dir: string,
    private readonly sealer: RecordSealer,
    private readonly warn?: (path: string, reason: string) => void,
  ) {}

  path(name: string): string {
    return join(this.dir, `${name}.json`)
  }

  private lockPath(name: string): string {
    return join(this.dir, `${name}.lock`)
  }

  get(name: string): Chain | null {
    assertValidChainName(name)
    const read = this.read(name)
    if (read.kind === 'ok') return read.chain
    if (read.kind === 'missing') return null
    throw new CorruptChainError(this.path(name), read.reason)
  }

  /** Every readable chain, by name; corrupt files are reported through `warn` and skipped. */
  list(): Chain[] {
    const names = readDirNames(this.dir)
    const chains: Chain[] = []
    for (const file of names.sort()) {
      if (!file.endsWith('.json')) continue
      const name = file.slice(0, -'.json'.length)
      if (!CHAIN_NAME_PATTERN.test(name)) continue
      const read = this.read(name)
      if (read.kind === 'ok') chains.push(read.chain)
      else if (read.kind === 'corrupt') this.warn?.(this.path(name), read.reason)
    }
    return chains
  }

  async create(chain: Chain): Promise<Chain> {
    const name = assertValidChainName(chain.name)
    try {
      ensureDir(this.dir)
      return await withLock(this.lockPath(name), { what: `chain "${name}"` }, () => {
        this.sweep(name)
        const next = this.sealed({ ...chain, schema_version: 1, rev: 1, updated_at: now() })
        const temp = join(this.dir, `${name}.json.${process.pid}-${uniqueSuffix()}.create`)
        writeNewFileDurably(temp, serialize(next))
        try {
          realFs.linkSync(temp, this.path(name))
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
            throw new IllegalStateError(
              `chain "${name}" already exists`,
              `add steps with "harness chain add ${name} …"`,
              'CHAIN_EXISTS',
            )
          }
          throw error
        } finally {
          safeUnlink(temp)
        }
        fsyncDir(this.dir)
        return next
      })
    } catch (error) {
      throw asDiskFault(error, this.path(name))
    }
  }

  /** Read-modify-write under the chain's lock; `mutate` returning undefined leaves it as it is. */
  async update(name: string, mutate: (current: Chain) => Chain | undefined): Promise<Chain> {
    assertValidChainName(name)
    try {
      return await withLock(this.lockPath(name), { what: `chain "${name}"` }, () => {
        this.sweep(name)
        const read = this.read(name)
        if (read.kind === 'missing') throw new ChainNotFoundError(name)
        if (read.kind === 'corrupt') throw new CorruptChainError(this.path(name), read.reason)
        const current = read.chain
        const changed = mutate(structuredClone(current))
        if (changed === undefined) return current
        // A write never launders a chain: only a sealed one is sealed again.
        const stamped = { ...changed, rev: (current.rev ?? 0) + 1, updated_at: now() }
        const next = current.sealed ? this.sealed(stamped) : unsealed(stamped)
        const temp = join(this.dir, `${name}.json.${process.pid}-${uniqueSuffix()}.tmp`)
        replaceFileDurably(this.path(name), temp, serialize(next))
        return next
      })
    } catch (error) {
      throw asDiskFault(error, this.path(name))
    }
  }

  private read(name: string): Read {
    let text: string
    try {
      text = readText(this.path(name), 'chain')
    } catch (error) {
      if (error instanceof UnsafeFileError) return { kind: 'corrupt', reason: error.reason }
      const code = (error as NodeJS.ErrnoException).code
      return code === 'ENOENT' ? { kind: 'missing' } : { kind: 'corrupt', reason: `cannot read: ${code}` }
    }
    let value: unknown
    try {
      value = parseJson(text)
    } catch (error) {
      return { kind: 'corrupt', reason: (error as Error).message }
    }
    const parsed = z.safeParse(ChainSchema, value)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      return {
        kind: 'corrupt',
        reason: `${issue?.path.join('.') || 'chain'}: ${issue?.message ?? 'invalid'}`,
      }
    }
    if (parsed.data.name !== name) {
      return { kind: 'corrupt', reason: `its name "${parsed.data.name}" does not match the file name` }
    }
    const chain = parsed.data
    chain.sealed = this.sealer.verify(chain)
    return { kind: 'ok', chain }
  }

  private sealed(chain: Chain): Chain {
    const content = unsealed(chain)
    delete content.sealed
    return { ...content, seal: this.sealer.seal(content), sealed: true }
  }

  /** With the lock held: temporary files of this chain are leftovers of a killed writer. */
  private sweep(name: string): void {
    let names: string[]
    try {
      names = readDirNames(this.dir)
    } catch {
      return
    }
    for (const file of names) {
      if (file.startsWith(`${name}.json.`) && (file.endsWith('.tmp') || file.endsWith('.create'))) {
        if (isFile(join(this.dir, file))) safeUnlink(join(this.dir, file))
      }
    }
  }
}

function unsealed(chain: Chain): Chain {
  const { seal: _seal, sealed: _sealed, ...rest } = chain
  return { ...rest, sealed: false }
}

/** The chain's text as written; never one the store could not read back (docs/security.md, "Limits at write time"). */
function serialize(chain: Chain): string {
  const { sealed: _computed, ...stored } = chain
  const text = `${JSON.stringify(stored, null, 2)}\n`
  const bytes = Buffer.byteLength(text)
  if (bytes > LIMITS.chain) {
    throw new HarnessError(
      'CHAIN_TOO_BIG',
      `chain "${chain.name}" would be ${bytes} bytes, over the ${LIMITS.chain} harness reads back: it was not written (the chain is as it was)`,
      ExitCode.Failure,
      'keep long prompts in files of the repository and point the steps at them',
    )
  }
  return text
}

function now(): string {
  return new Date().toISOString()
}

function isFile(path: string): boolean {
  try {
    return lstatOrNull(path)?.isFile() ?? false
  } catch {
    return false
  }
}

function safeUnlink(path: string): void {
  unlinkQuiet(path)
}
