import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { assertSealedChain, ChainStore } from '../../../../src/sessions/chains/store.js'
import { RecordSealer } from '../../../../src/sessions/record/seal.js'
import { tmpDir } from '../../../helpers/tmp.js'

const at = '2026-01-01T00:00:00.000Z'

function store() {
  const root = tmpDir()
  return new ChainStore(join(root, 'chains'), new RecordSealer(join(root, 'key')))
}

describe('chain store', () => {
  test('writes sealed chains atomically; a second create of a name is refused', async () => {
    const chains = store()
    const created = await chains.create({ name: 'a', created_at: at, steps: [] })
    expect(created.sealed).toBe(true)
    await expect(chains.create({ name: 'a', created_at: at, steps: [] })).rejects.toMatchObject({
      code: 'CHAIN_EXISTS',
    })
    const updated = await chains.update('a', (c) => ({ ...c, steps: [{ n: 1, added_at: at, prompt: 'x' }] }))
    expect(updated.rev).toBe(2)
    expect(chains.get('a')?.sealed).toBe(true)
    expect(readdirSync(chains.dir).filter((f) => f.includes('.tmp') || f.includes('.create'))).toEqual([])
  })

  test('a chain that would pass the read limit is never written: CHAIN_TOO_BIG, the chain as it was', async () => {
    const chains = store()
    await chains.create({ name: 'big', created_at: at, steps: [] })
    const before = readFileSync(chains.path('big'))
    // Ten steps of a prompt each as long as one argument may be (128 KiB): more than a chain file may hold.
    const steps = Array.from({ length: 10 }, (_, i) => ({
      n: i + 1,
      added_at: at,
      prompt: 'p'.repeat(128 * 1024),
    }))
    await expect(chains.update('big', (c) => ({ ...c, steps }))).rejects.toMatchObject({
      code: 'CHAIN_TOO_BIG',
    })
    expect(readFileSync(chains.path('big')).equals(before)).toBe(true)
    expect(chains.get('big')?.steps).toEqual([])
    expect(readdirSync(chains.dir).filter((f) => f.includes('.tmp') || f.includes('.create'))).toEqual([])
  })

  test('a hand-edited chain is foreign: shown, never acted on, and a write keeps it foreign', async () => {
    const chains = store()
    await chains.create({ name: 'b', created_at: at, steps: [] })
    const path = chains.path('b')
    const text = JSON.parse(readFileSync(path, 'utf8'))
    text.steps.push({ n: 1, added_at: at, agent: 'exec', extra_args: ['rm', '-rf', '/'] })
    writeFileSync(path, JSON.stringify(text))
    const foreign = chains.get('b')
    expect(foreign?.sealed).toBe(false)
    expect(() => assertSealedChain(foreign as never)).toThrow(/foreign/)
    expect((await chains.update('b', (c) => ({ ...c, last_outcome: 'x' }))).sealed).toBe(false)
    expect(chains.get('b')?.sealed).toBe(false)
    expect(chains.list().map((c) => c.name)).toEqual(['b'])
  })

  test('invalid names are usage errors; corrupt files are reported by list and skipped', async () => {
    const chains = store()
    expect(() => chains.get('../x')).toThrow(/invalid chain name/)
    await chains.create({ name: 'ok', created_at: at, steps: [] })
    writeFileSync(chains.path('bad'), '{')
    const warned: string[] = []
    const listing = new ChainStore(chains.dir, new RecordSealer(join(chains.dir, '..', 'key')), (p) =>
      warned.push(p),
    )
    expect(listing.list().map((c) => c.name)).toEqual(['ok'])
    expect(warned).toEqual([chains.path('bad')])
  })

  test("a step's permission is one of the levels, typed by the schema (never cast)", async () => {
    const chains = store()
    const step = { n: 1, added_at: at, prompt: 'x', permission: 'autonomous' as const }
    await chains.create({ name: 'p', created_at: at, steps: [step] })
    expect(chains.get('p')?.steps[0]?.permission).toBe('autonomous')
    const path = chains.path('p')
    const text = JSON.parse(readFileSync(path, 'utf8'))
    text.steps[0].permission = 'root'
    writeFileSync(path, JSON.stringify(text))
    const warned: string[] = []
    const listing = new ChainStore(chains.dir, new RecordSealer(join(chains.dir, '..', 'key')), (p) =>
      warned.push(p),
    )
    expect(listing.list()).toEqual([])
    expect(warned).toEqual([path])
  })
})
