import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  canonicalAsIs,
  canonicalJson,
  inCanonicalOrder,
  RecordSealer,
} from '../../../../src/sessions/record/seal.js'
import { SessionStore } from '../../../../src/sessions/record/store.js'
import { sessionRecord } from '../../../fixtures/records.js'
import { tmpDir } from '../../../helpers/tmp.js'

function setup() {
  const root = tmpDir()
  const sealer = new RecordSealer(join(root, 'state', 'harness', 'key'))
  const dir = join(root, 'sessions')
  return { store: new SessionStore(dir, { sealer }), dir, sealer }
}

const onDisk = (dir: string, id: string) => JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8'))

describe('record seals', () => {
  it('canonical JSON does not depend on key order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }], e: undefined })).toBe(
      '{"a":[{"c":null,"d":2}],"b":1}',
    )
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }))
  })

  it('gives byte for byte the text of its first, JSON.stringify-only form, on which every seal rests', () => {
    const reference = (value: unknown): string => {
      if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
      if (Array.isArray(value))
        return `[${value.map((item) => reference(item === undefined ? null : item)).join(',')}]`
      const entries = Object.keys(value)
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${reference((value as Record<string, unknown>)[key])}`)
      return `{${entries.join(',')}}`
    }
    const strings = [
      '',
      'plain',
      'x"y',
      'back\\slash',
      'tab\t',
      'nl\n',
      '\u0000',
      '\u001f',
      '\u007f',
      'é',
      '\u2028\u2029',
      '😀',
      '\ud800',
      'a\udfffb',
      '</script>',
      '$x {y}',
    ]
    const numbers = [
      0,
      -0,
      1,
      -1.5,
      0.1 + 0.2,
      1e21,
      1e-7,
      -1e-7,
      123456789012345680000,
      2 ** 53 + 2,
      NaN,
      Infinity,
      -Infinity,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
    ]
    const values: unknown[] = [
      ...strings,
      ...numbers,
      true,
      false,
      null,
      undefined,
      () => 1,
      Symbol('s'),
      { [strings[2] as string]: 1, '😀': [undefined, () => 1, { z: undefined }], '': {} },
      sessionRecord('canon001', {
        prompt: strings.join(' '),
        metadata: { os: 'é', hostname: 'x"y', n: -0 },
      } as never),
      [strings, numbers, { b: strings, a: numbers }],
      // Keys an object lists first and in numeric order, and a key that would set a prototype.
      { a: { '2': 1, '10': 2, x: 3, '01': 4, '-1': 5 } },
      [{ z: 1, '0': [{ '4294967295': 1, '4294967294': 2 }] }],
      JSON.parse('{"z": 1, "__proto__": {"b": 1, "a": [2]}, "a": 0}'),
    ]
    for (const value of values) expect(canonicalJson(value), String(value)).toBe(reference(value))
  })

  it('gives the same text for objects whose keys come in any order, sharing first keys or not', () => {
    // Each sequence of keys is sorted once and remembered: a sequence that starts like another, or has the
    // same keys in another order, or more or fewer of them, must still give the sorted text.
    const shapes = [
      { b: 1, a: 2, c: 3 },
      { b: 1, a: 2 },
      { b: 1, a: 2, c: 3, '': 4 },
      { c: 3, b: 1, a: 2 },
      { a: 2, b: 1, c: 3 },
      { b: 1, 10: 'x', 9: 'y', a: 2 },
      {
        seal: 's',
        b: [
          { y: 1, x: 2 },
          { x: 2, y: 1, z: 0 },
        ],
      },
    ]
    for (let round = 0; round < 2; round++) {
      for (const value of shapes) {
        const sorted = (v: unknown): unknown =>
          Array.isArray(v)
            ? v.map(sorted)
            : v && typeof v === 'object'
              ? Object.fromEntries(
                  Object.keys(v)
                    .sort()
                    .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
                )
              : v
        const expected = `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${JSON.stringify(sorted((value as Record<string, unknown>)[k]))}`)
          .join(',')}}`
        expect(canonicalJson(value)).toBe(expected)
      }
    }
  })

  it('a parsed value already in canonical order gives the same text as it is; any other gives none', () => {
    const omit = new Set(['seal', 'sealed', 'seal_problem'])
    const record = {
      ...sessionRecord('asis0001', { metadata: { os: 'linux', hostname: 'h' } } as never),
      seal: 'a'.repeat(64),
      sealed: true,
      zz_extra: [{ b: 1, a: [{ d: 1, c: 2 }] }],
    }
    const parsed = JSON.parse(JSON.stringify(inCanonicalOrder(record)))
    expect(canonicalAsIs(parsed, omit)).toBe(canonicalJson(record, omit))
    // The keys left out are put back.
    expect(parsed.seal).toBe('a'.repeat(64))
    expect(Object.keys(parsed)).toEqual(Object.keys(record).sort())
    for (const other of [
      JSON.parse(JSON.stringify(record)), // the keys as they came
      JSON.parse(`{"a": 1, "b": {"d": 1, "c": 2}}`), // out of order one level down
      JSON.parse(`{"a": {"10": 1, "9": 2}}`), // index keys, listed in numeric order
      JSON.parse(`{"__proto__": {"a": 1}, "b": 1}`),
      [{ a: 1 }, Object.create({ inherited: 1 })],
      { a: undefined },
    ]) {
      expect(canonicalAsIs(other, omit), JSON.stringify(other)).toBeNull()
    }
  })

  it('writes records with their keys in canonical order, which reads back verified the same way', async () => {
    const { store, dir } = setup()
    await store.create(sessionRecord('order001', { metadata: { os: 'linux', hostname: 'h' } } as never))
    await store.update('order001', (r) => ({ ...r, zz_later: { y: 1, x: 2 }, status: 'FAILED' }))
    const text = readFileSync(join(dir, 'order001.json'), 'utf8')
    const sortedDeep = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sortedDeep)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, sortedDeep((v as Record<string, unknown>)[k])]),
            )
          : v
    expect(text).toBe(`${JSON.stringify(sortedDeep(JSON.parse(text)), null, 2)}\n`)
    expect(store.get('order001')).toMatchObject({ sealed: true, status: 'FAILED', zz_later: { x: 2, y: 1 } })
    // A lower-case status reads as upper case, as it always did, so the seal is checked on the record read
    // (the file's own text would not verify): the same answer as before the file was written in order.
    writeFileSync(join(dir, 'order001.json'), text.replace('"status": "FAILED"', '"status": "failed"'))
    expect(store.get('order001')).toMatchObject({ sealed: true, status: 'FAILED' })
    writeFileSync(join(dir, 'order001.json'), text.replace('"status": "FAILED"', '"status": "KILLED"'))
    expect(store.get('order001')).toMatchObject({ sealed: false, seal_problem: 'changed' })
  })

  it('seals what it writes with a 0600 key made on first use; any change by hand makes the record foreign', async () => {
    const { store, dir, sealer } = setup()
    const created = await store.create(sessionRecord('seal0001'))
    expect(created.sealed).toBe(true)
    expect(statSync(sealer.keyFile).mode & 0o777).toBe(0o600)
    expect(statSync(join(sealer.keyFile, '..')).mode & 0o777).toBe(0o700)
    const written = onDisk(dir, 'seal0001')
    expect(written.seal).toMatch(/^[0-9a-f]{64}$/)
    expect(written).not.toHaveProperty('sealed')
    expect(store.get('seal0001')?.sealed).toBe(true)

    // Key order on disk does not matter; content does.
    const reordered = Object.fromEntries(Object.entries(written).reverse())
    writeFileSync(join(dir, 'seal0001.json'), JSON.stringify(reordered))
    expect(store.get('seal0001')?.sealed).toBe(true)
    writeFileSync(join(dir, 'seal0001.json'), JSON.stringify({ ...written, provider: 'exec' }))
    expect(store.get('seal0001')?.sealed).toBe(false)
    // A file cannot claim to be sealed.
    writeFileSync(join(dir, 'seal0001.json'), JSON.stringify({ ...written, provider: 'exec', sealed: true }))
    expect(store.get('seal0001')?.sealed).toBe(false)
  })

  it('an update never launders a foreign record; adopting seals it', async () => {
    const { store, dir } = setup()
    await store.create(sessionRecord('seal0002'))
    const forged = { ...onDisk(dir, 'seal0002'), permission: 'autonomous' }
    writeFileSync(join(dir, 'seal0002.json'), JSON.stringify(forged))
    const updated = await store.update('seal0002', (r) => ({ ...r, status: 'PAUSED', sealed: true }))
    expect(updated.sealed).toBe(false)
    expect(onDisk(dir, 'seal0002')).not.toHaveProperty('seal')
    expect(store.get('seal0002')?.sealed).toBe(false)

    const adopted = await store.update('seal0002', () => undefined, { adopt: true })
    expect(adopted.sealed).toBe(true)
    expect(store.get('seal0002')).toMatchObject({ sealed: true, permission: 'autonomous' })
  })

  it('another key (another user) sees the records as foreign', async () => {
    const { store, dir } = setup()
    await store.create(sessionRecord('seal0003'))
    const other = new SessionStore(dir, { sealer: new RecordSealer(join(tmpDir(), 'key')) })
    expect(other.get('seal0003')?.sealed).toBe(false)
  })
})
