import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import * as z from 'zod/mini'
import { HarnessConfigSchema } from '../../src/config.js'
import { configGet, configList, configSet, configUnset, knownKeys } from '../../src/config-edit.js'
import { tmpDir } from '../helpers/tmp.js'

const SCHEMA_FILE = fileURLToPath(new URL('../../schema/config.schema.json', import.meta.url))

describe('config get/set/unset through the schema', () => {
  const target = () => ({ file: join(tmpDir(), '.harness', 'config.json'), scope: 'project' as const })

  test('set, get, list and unset; empty sections go; a bad value writes nothing', () => {
    const t = target()
    configSet(t, 'defaults.agent', 'codex')
    configSet(t, 'worktree.include', ['.env'])
    expect(configGet(t, 'defaults.agent').value).toBe('codex')
    expect(configList(t)).toEqual([
      { key: 'defaults.agent', value: 'codex' },
      { key: 'worktree.include', value: ['.env'] },
    ])
    const before = readFileSync(t.file, 'utf8')
    expect(() => configSet(t, 'cleanup.older_than', 'soon')).toThrow(
      /invalid duration "soon".*nothing was written/,
    )
    expect(readFileSync(t.file, 'utf8')).toBe(before)
    configUnset(t, 'worktree.include')
    expect(JSON.parse(readFileSync(t.file, 'utf8'))).toEqual({ defaults: { agent: 'codex' } })
    expect(() => configGet(t, 'defaults.model')).toThrow(/not set/)
  })

  test('an unknown key names the nearest valid one, and nothing is created', () => {
    const t = target()
    expect(() => configSet(t, 'defaults.permision', 'readonly')).toThrow(
      expect.objectContaining({ exitCode: 2, hint: expect.stringContaining('"defaults.permission"') }),
    )
    expect(() => configGet(t, 'providers.claude.comand')).toThrow(
      expect.objectContaining({ hint: expect.stringContaining('"providers.claude.command"') }),
    )
    expect(existsSync(t.file)).toBe(false)
    expect(knownKeys()).toContain('cleanup.older_than')
  })

  test('a trusted project file stays trusted after a change; an untrusted one does not become trusted', () => {
    for (const wasTrusted of [true, false]) {
      const t = target()
      let trusted = 0
      configSet(t, 'defaults.agent', 'codex', { isTrusted: () => wasTrusted, trust: () => void trusted++ })
      expect(trusted).toBe(wasTrusted ? 1 : 0)
    }
  })
})

test('schema/config.schema.json is generated from the zod schema and current ("npm run schema" updates it)', () => {
  const expected = JSON.stringify(
    z.toJSONSchema(HarnessConfigSchema, { io: 'input', unrepresentable: 'any' }),
    null,
    2,
  )
  if (process.env.UPDATE_CONFIG_SCHEMA === '1') writeFileSync(SCHEMA_FILE, `${expected}\n`)
  expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(`${expected}\n`)
})
