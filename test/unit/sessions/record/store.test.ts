import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  CorruptRecordError,
  InvalidSessionIdError,
  SessionExistsError,
  SessionNotFoundError,
} from '../../../../src/errors.js'
import { SessionStore, type StoreProblem } from '../../../../src/sessions/record/store.js'
import { sessionRecord, testSealer } from '../../../fixtures/records.js'
import { raceWorkers, storeWorkerBundle, Worker } from '../../../fixtures/workers.js'
import { tmpDir } from '../../../helpers/tmp.js'

// Made by the first test that starts a worker: those are tagged `process`, and the fast lane runs the rest.
const bundle = storeWorkerBundle(tmpDir)

function newStore(): { store: SessionStore; dir: string; problems: StoreProblem[] } {
  const dir = join(tmpDir(), 'sessions')
  const problems: StoreProblem[] = []
  return {
    store: new SessionStore(dir, { sealer: testSealer(), warn: (p) => problems.push(p) }),
    dir,
    problems,
  }
}

function onDisk(dir: string, id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8'))
}

/** A pid that no process holds: a child that was SIGKILLed and reaped. */
async function deadPid(): Promise<number> {
  const worker = new Worker(await bundle(), ['hold-lock', join(tmpDir(), 'x.lock')])
  await worker.waitForLine('locked')
  await worker.kill()
  return worker.pid
}

describe('SessionStore basics', () => {
  it('creates, gets, lists, updates and deletes', async () => {
    const { store, dir } = newStore()
    expect(store.list()).toEqual([])
    expect(store.get('aaaa1111')).toBeNull()

    const created = await store.create(sessionRecord('aaaa1111'))
    await store.create(sessionRecord('bbbb2222', { status: 'FAILED', exit_code: 1 }))
    expect(created.rev).toBe(1)
    expect(created.schema_version).toBe(1)
    expect(store.get('aaaa1111')).toEqual(created)
    expect({ ...onDisk(dir, 'aaaa1111'), sealed: true }).toEqual(created)
    expect(
      store
        .list()
        .map((r) => r.id)
        .sort(),
    ).toEqual(['aaaa1111', 'bbbb2222'])
    expect(store.ids().sort()).toEqual(['aaaa1111', 'bbbb2222'])
    expect(store.exists('aaaa1111')).toBe(true)

    const updated = await store.update('aaaa1111', (r) => ({ ...r, status: 'KILLED', stop_reason: 'killed' }))
    expect(updated).toMatchObject({ status: 'KILLED', stop_reason: 'killed', rev: 2 })
    expect(store.get('aaaa1111')).toEqual(updated)

    await store.delete('aaaa1111')
    expect(store.get('aaaa1111')).toBeNull()
    expect(store.exists('aaaa1111')).toBe(false)
    expect(store.list().map((r) => r.id)).toEqual(['bbbb2222'])
    await expect(store.update('aaaa1111', (r) => r)).rejects.toBeInstanceOf(SessionNotFoundError)
    await expect(store.delete('aaaa1111')).rejects.toBeInstanceOf(SessionNotFoundError)
    // Only records remain: no lock or temp files are left behind.
    expect(readdirSync(dir)).toEqual(['bbbb2222.json'])
  })

  it('an update or delete of a missing id is SessionNotFoundError when the sessions folder is missing too', async () => {
    const { store, dir } = newStore()
    expect(existsSync(dir)).toBe(false)
    const update = store.update('aaaa1111', (r) => r)
    await expect(update).rejects.toBeInstanceOf(SessionNotFoundError)
    await expect(update).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    await expect(store.delete('aaaa1111')).rejects.toBeInstanceOf(SessionNotFoundError)
    expect(await store.quarantine('aaaa1111', join(dir, '..', 'corrupt'))).toBeNull()
    // Nothing is made for a record that is not there.
    expect(existsSync(dir)).toBe(false)
  })

  it('writes records pretty-printed, 0600, in a 0700 folder', async () => {
    const { store, dir } = newStore()
    await store.create(sessionRecord('perm0001'))
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'perm0001.json')).mode & 0o777).toBe(0o600)
    await store.update('perm0001', (r) => ({ ...r, prompt: 'again' }))
    expect(statSync(join(dir, 'perm0001.json')).mode & 0o777).toBe(0o600)
    const text = readFileSync(join(dir, 'perm0001.json'), 'utf8')
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`)
  })

  it('bumps rev on every write; an update that returns undefined writes nothing', async () => {
    const { store, dir } = newStore()
    await store.create(sessionRecord('rev00001'))
    for (let i = 2; i <= 5; i++) {
      const next = await store.update('rev00001', (r) => ({ ...r, prompt: `step ${i}` }))
      expect(next.rev).toBe(i)
      expect(onDisk(dir, 'rev00001').rev).toBe(i)
    }
    const path = join(dir, 'rev00001.json')
    const old = new Date(Date.now() - 60_000)
    utimesSync(path, old, old)
    const before = readFileSync(path)
    const { ino, mtimeMs } = statSync(path)
    const result = await store.update('rev00001', () => undefined)
    expect(result.rev).toBe(5)
    expect(result.prompt).toBe('step 5')
    expect(readFileSync(path)).toEqual(before)
    expect(statSync(path).ino).toBe(ino)
    expect(statSync(path).mtimeMs).toBe(mtimeMs)
  })

  it('the mutator gets a copy: changing it in place and returning undefined writes nothing', async () => {
    const { store } = newStore()
    await store.create(sessionRecord('copy0001'))
    await store.update('copy0001', (r) => {
      r.status = 'FAILED'
      return undefined
    })
    expect(store.get('copy0001')?.status).toBe('COMPLETED')
  })

  it('delete runs its check under the lock and keeps the record when the check throws', async () => {
    const { store } = newStore()
    await store.create(sessionRecord('veto0001'))
    await expect(
      store.delete('veto0001', () => {
        throw new Error('still running')
      }),
    ).rejects.toThrow('still running')
    expect(store.get('veto0001')).not.toBeNull()
  })

  it('refuses a malformed id before touching any file', async () => {
    const { store, dir } = newStore()
    for (const id of ['../x', 'a/b', 'a..b', '', 'x'.repeat(300)]) {
      expect(() => store.get(id)).toThrow(InvalidSessionIdError)
      await expect(store.create(sessionRecord(id))).rejects.toBeInstanceOf(InvalidSessionIdError)
      await expect(store.update(id, (r) => r)).rejects.toBeInstanceOf(InvalidSessionIdError)
    }
    expect(existsSync(dir)).toBe(false)
  })
})

describe('SessionStore delete of a known record', () => {
  /** A store whose seal checks are counted. */
  function countingStore(): { store: SessionStore; dir: string; verified: () => number } {
    const dir = join(tmpDir(), 'sessions')
    const sealer = testSealer()
    let count = 0
    const check = sealer.check.bind(sealer)
    sealer.check = (record, scope) => {
      count++
      return check(record, scope)
    }
    return { store: new SessionStore(dir, { sealer }), dir, verified: () => count }
  }

  it('does not parse and verify again the bytes a record handed back was read from', async () => {
    const { store, verified } = countingStore()
    await store.create(sessionRecord('aaaa1111'))
    const [read] = store.list()
    const before = verified()
    let seen: unknown = null
    await store.delete(
      'aaaa1111',
      (current) => {
        seen = current
      },
      read,
    )
    expect(verified() - before).toBe(0)
    expect(seen).toBe(read)
    expect(store.exists('aaaa1111')).toBe(false)
  })

  it('reads the record again when its file changed since, or the record was not read by this store', async () => {
    const { store, verified } = countingStore()
    await store.create(sessionRecord('aaaa1111'))
    await store.create(sessionRecord('bbbb2222'))
    const [first] = store.list().filter((r) => r.id === 'aaaa1111')
    await store.update('aaaa1111', (r) => ({ ...r, prompt: 'changed' }))
    let seen: unknown = null
    const before = verified()
    await store.delete(
      'aaaa1111',
      (current) => {
        seen = current
      },
      first,
    )
    expect(verified() - before).toBe(1)
    expect(seen).toMatchObject({ rev: 2, prompt: 'changed' })
    // A copy was not read from the file by this store: its bytes are unknown, so the file is read again.
    const copy = structuredClone(store.get('bbbb2222'))
    const again = verified()
    await store.delete('bbbb2222', undefined, copy ?? undefined)
    expect(verified() - again).toBe(1)
  })
})

describe('SessionStore create', () => {
  it('never takes an existing id', async () => {
    const { store, dir } = newStore()
    await store.create(sessionRecord('dup00001', { prompt: 'first' }))
    const before = readFileSync(join(dir, 'dup00001.json'))
    await expect(store.create(sessionRecord('dup00001', { prompt: 'second' }))).rejects.toBeInstanceOf(
      SessionExistsError,
    )
    expect(readFileSync(join(dir, 'dup00001.json'))).toEqual(before)
    expect(readdirSync(dir)).toEqual(['dup00001.json'])
  })

  it('racing processes: exactly one creates each id, the others get SessionExistsError', {
    tags: ['process'],
  }, async () => {
    const { store, dir } = newStore()
    store.ensureDir()
    const ids = Array.from({ length: 40 }, (_, i) => `race${String(i).padStart(4, '0')}`)
    const workers = await raceWorkers(await bundle(), 6, () => ['create', dir, ...ids])
    await Promise.all(workers.map((w) => w.succeeded()))
    const winners = new Map<string, number[]>()
    for (const w of workers) {
      for (const line of w.lines()) {
        if (line === 'ready' || line === 'done') continue
        const [outcome, id] = line.split(' ')
        expect(outcome, line).toMatch(/^(created|exists)$/)
        if (outcome === 'created') winners.set(id as string, [...(winners.get(id as string) ?? []), w.pid])
      }
    }
    for (const id of ids) {
      expect(winners.get(id), id).toHaveLength(1)
      // The record on disk is the winner's.
      expect(onDisk(dir, id).creator_pid).toBe(winners.get(id)?.[0])
    }
    expect(readdirSync(dir).sort()).toEqual(ids.map((id) => `${id}.json`).sort())
  })
})

describe('SessionStore reading damaged folders', () => {
  it('reports corrupt and invalid files with path and reason, skips them, and leaves them untouched', async () => {
    const { store, dir, problems } = newStore()
    await store.create(sessionRecord('good0001'))
    const bad: Record<string, string> = {
      trunc001: '{"id": "trunc001", "provider": "cla',
      empty001: '',
      invalid1: JSON.stringify({ id: 'invalid1', provider: 'claude', status: 'SLEEPING' }),
      wrongid1: JSON.stringify(sessionRecord('other001')),
      array001: '[]',
    }
    for (const [id, text] of Object.entries(bad)) writeFileSync(join(dir, `${id}.json`), text)
    const stats = Object.fromEntries(Object.keys(bad).map((id) => [id, statSync(join(dir, `${id}.json`))]))

    expect(store.list().map((r) => r.id)).toEqual(['good0001'])
    expect(problems.map((p) => p.path).sort()).toEqual(
      Object.keys(bad)
        .map((id) => join(dir, `${id}.json`))
        .sort(),
    )
    const reasonOf = (id: string) => problems.find((p) => p.path.endsWith(`${id}.json`))?.reason
    expect(reasonOf('trunc001')).toMatch(/not valid JSON/)
    expect(reasonOf('empty001')).toMatch(/not valid JSON/)
    expect(reasonOf('invalid1')).toMatch(/status/)
    expect(reasonOf('wrongid1')).toMatch(/does not match the file name/)

    // get and update name the file and its reason; nothing is rewritten.
    let error: unknown
    try {
      store.get('trunc001')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(CorruptRecordError)
    expect((error as CorruptRecordError).path).toBe(join(dir, 'trunc001.json'))
    await expect(store.update('invalid1', (r) => r)).rejects.toBeInstanceOf(CorruptRecordError)
    await expect(store.delete('invalid1')).rejects.toBeInstanceOf(CorruptRecordError)

    for (const [id, text] of Object.entries(bad)) {
      const path = join(dir, `${id}.json`)
      expect(readFileSync(path, 'utf8')).toBe(text)
      expect(statSync(path).ino).toBe(stats[id]?.ino)
      expect(statSync(path).mtimeMs).toBe(stats[id]?.mtimeMs)
    }
  })

  it('reads lowercase status and keeps unknown fields, top-level and nested, through an update', async () => {
    const { store, dir } = newStore()
    mkdirSync(dir, { recursive: true })
    const base = sessionRecord('newer001')
    const fromNewerVersion = {
      ...base,
      status: 'completed',
      schema_version: 7,
      rev: 41,
      future_field: { nested: [1, 2, 3] },
      runs: (base.runs ?? []).map((run) => ({
        ...run,
        future_run_field: 'keep me',
        sandbox: { kind: 'vm' },
      })),
      metadata: { os: 'linux', future_meta: true },
      stop_request: { action: 'kill', at: '2026-09-24T18:30:00.000Z', by_pid: 1, future_stop: 'x' },
    }
    writeFileSync(join(dir, 'newer001.json'), JSON.stringify(fromNewerVersion))

    const read = store.get('newer001')
    expect(read?.status).toBe('COMPLETED')
    expect(read?.future_field).toEqual({ nested: [1, 2, 3] })

    await store.update('newer001', (r) => ({ ...r, prompt: 'changed by an older harness' }))
    const written = onDisk(dir, 'newer001')
    expect(written).toMatchObject({
      status: 'COMPLETED',
      prompt: 'changed by an older harness',
      schema_version: 7,
      rev: 42,
      future_field: { nested: [1, 2, 3] },
      metadata: { os: 'linux', future_meta: true },
      stop_request: { future_stop: 'x' },
    })
    expect(written.runs).toEqual(
      (base.runs ?? []).map((run) => ({ ...run, future_run_field: 'keep me', sandbox: { kind: 'vm' } })),
    )
  })

  it('sweeps leftover temp files of killed writers', { tags: ['process'] }, async () => {
    const { store, dir } = newStore()
    await store.create(sessionRecord('left0001'))
    await store.create(sessionRecord('left0002'))
    const dead = await deadPid()
    const leftovers = [
      'left0001.json.3141592653', // write-file-atomic's temp
      `left0001.json.${dead}-abc123.create`, // create's temp
      `left0001.lock.${dead}.k2x9abc.tmp`, // a lock's temp
      `left0001.lock.${dead}.1790000000000-1234.0.break`, // a lock breaker's guard
    ]
    for (const name of leftovers) writeFileSync(join(dir, name), '{"half": ')
    // A live process's lock temp is not a leftover: its lock may be about to be taken.
    writeFileSync(join(dir, `left0001.lock.${process.pid}.zzz.tmp`), '{}')

    await store.update('left0001', (r) => ({ ...r, prompt: 'swept' }))
    expect(readdirSync(dir).sort()).toEqual(
      [`left0001.lock.${process.pid}.zzz.tmp`, 'left0001.json', 'left0002.json'].sort(),
    )
    unlinkSync(join(dir, `left0001.lock.${process.pid}.zzz.tmp`))

    // list() sweeps too (when the record's lock is free), and still returns every record.
    writeFileSync(join(dir, 'left0002.json.2718281828'), 'garbage')
    expect(
      store
        .list()
        .map((r) => r.id)
        .sort(),
    ).toEqual(['left0001', 'left0002'])
    expect(readdirSync(dir).sort()).toEqual(['left0001.json', 'left0002.json'])
  })

  it('deletions made together each sweep their own leftovers, also one written while the lock was held', async () => {
    const { store, dir } = newStore()
    const ids = ['toge0001', 'toge0002', 'toge0003']
    for (const id of ids) await store.create(sessionRecord(id))
    // A killed writer's leftover from before, and one a writer that ignored the lock (an old version) left
    // during the deletion, after the first sweep: a sweep reading an older listing would miss it.
    writeFileSync(join(dir, 'toge0001.json.3141592653'), '{"half": ')
    await Promise.all(
      ids.map((id) =>
        store.delete(id, async () => {
          // The writer comes late: the others have listed the folder for their sweeps by then.
          await new Promise((resolve) => setTimeout(resolve, id === 'toge0002' ? 100 : 0))
          if (id === 'toge0002') writeFileSync(join(dir, 'toge0002.json.2718281828'), '{"half": ')
        }),
      ),
    )
    expect(readdirSync(dir)).toEqual([])
    expect(store.list()).toEqual([])
  })

  it('repairs a missing record from a valid leftover', async () => {
    const { store, dir, problems } = newStore()
    await store.create(sessionRecord('miss0001'))
    const newer = { ...onDisk(dir, 'miss0001'), prompt: 'the newer write', rev: 2 }
    // A writer killed between its rename steps: only the temp file holds the record.
    unlinkSync(join(dir, 'miss0001.json'))
    writeFileSync(join(dir, 'miss0001.json.123456789'), JSON.stringify(newer))
    expect(store.get('miss0001')).toMatchObject({ prompt: 'the newer write', rev: 2 })
    expect(onDisk(dir, 'miss0001')).toMatchObject({ prompt: 'the newer write', rev: 2 })
    expect(readdirSync(dir)).toEqual(['miss0001.json'])
    expect(problems).toEqual([
      { path: join(dir, 'miss0001.json'), reason: expect.stringMatching(/missing.*repaired/) },
    ])
  })

  it('repairs a corrupt record from the newest valid leftover, and ignores invalid ones', async () => {
    const { store, dir, problems } = newStore()
    await store.create(sessionRecord('corr0001'))
    const current = onDisk(dir, 'corr0001')
    writeFileSync(join(dir, 'corr0001.json'), '{"id": "corr0001", "pro')
    const older = join(dir, 'corr0001.json.1111')
    const newer = join(dir, 'corr0001.json.2222')
    writeFileSync(older, JSON.stringify({ ...current, prompt: 'older' }))
    writeFileSync(newer, JSON.stringify({ ...current, prompt: 'newer' }))
    writeFileSync(join(dir, 'corr0001.json.3333'), '{"torn')
    writeFileSync(join(dir, 'corr0001.json.4444'), JSON.stringify(sessionRecord('someone')))
    const past = new Date(Date.now() - 10_000)
    utimesSync(older, past, past)

    const updated = await store.update('corr0001', (r) => ({ ...r, status: 'FAILED' }))
    expect(updated).toMatchObject({ prompt: 'newer', status: 'FAILED' })
    expect(onDisk(dir, 'corr0001')).toMatchObject({ prompt: 'newer', status: 'FAILED' })
    expect(readdirSync(dir)).toEqual(['corr0001.json'])
    expect(problems.map((p) => p.reason)).toEqual([
      expect.stringMatching(/corrupt record repaired from corr0001\.json\.2222/),
    ])
  })

  it('repairs a corrupt record from a valid <id>.json.tmp (the plain temp name), not deletes it', async () => {
    const { store, dir, problems } = newStore()
    await store.create(sessionRecord('plain001'))
    const current = onDisk(dir, 'plain001')
    writeFileSync(join(dir, 'plain001.json'), '{"id": "plain001", "pro')
    writeFileSync(join(dir, 'plain001.json.tmp'), JSON.stringify({ ...current, prompt: 'kept' }))
    expect(store.get('plain001')).toMatchObject({ prompt: 'kept' })
    expect(onDisk(dir, 'plain001')).toMatchObject({ prompt: 'kept' })
    expect(readdirSync(dir)).toEqual(['plain001.json'])
    expect(problems.map((p) => p.reason)).toEqual([
      expect.stringMatching(/corrupt record repaired from plain001\.json\.tmp/),
    ])
  })

  it("a name's index counts only while its record carries the name; a failed create leaves none", async () => {
    const { store, dir } = newStore()
    const names = join(dir, '..', 'names')
    await store.create(sessionRecord('name0001'))
    // Planted (or left by a killed run): an index naming a record that does not carry the name.
    mkdirSync(names, { recursive: true })
    writeFileSync(join(names, 'auth'), 'name0001\n')
    expect(store.idOfName('auth')).toBeNull()
    await store.create(sessionRecord('name0002', { name: 'auth' }))
    expect(readFileSync(join(names, 'auth'), 'utf8')).toBe('name0002\n')
    expect(store.idOfName('auth')).toBe('name0002')
    // A create that fails (its id is taken) takes no name.
    await expect(store.create(sessionRecord('name0001', { name: 'other' }))).rejects.toMatchObject({
      code: 'SESSION_EXISTS',
    })
    expect(existsSync(join(names, 'other'))).toBe(false)
    expect(readdirSync(names).sort()).toEqual(['auth'])
  })

  it('restore brings a name back, unless another session holds it now', async () => {
    const { store, dir } = newStore()
    await store.create(sessionRecord('arch0001', { name: 'kept' }))
    const bytes = readFileSync(join(dir, 'arch0001.json'))
    await store.delete('arch0001')
    await store.restore('arch0001', bytes)
    expect(store.idOfName('kept')).toBe('arch0001')
    await store.delete('arch0001')
    await store.create(sessionRecord('newr0001', { name: 'kept' }))
    await store.restore('arch0001', bytes)
    expect(store.get('arch0001')?.name).toBe('kept')
    expect(store.idOfName('kept')).toBe('newr0001')
  })

  it('a corrupt record with no valid leftover stays as it is', async () => {
    const { store, dir } = newStore()
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'lost0001.json'), 'not json')
    writeFileSync(join(dir, 'lost0001.json.99'), 'not json either')
    expect(() => store.get('lost0001')).toThrow(CorruptRecordError)
    expect(readFileSync(join(dir, 'lost0001.json'), 'utf8')).toBe('not json')
  })
})
