import { dirname } from 'node:path'
import * as z from 'zod/mini'
import { HarnessConfigSchema, readConfigFile, userConfigFile } from './config.js'
import { ensureDir, entryExists, parseJson, readText } from './disk/door.js'
import { replaceFileDurably } from './durable.js'
import { ConfigError, IllegalStateError, UsageError } from './errors.js'
import type { ProjectPaths } from './project.js'

/**
 * `harness config get/set/unset/list`: one file at a time (the project's, or the user's with --user), every
 * change validated through the same schema that loading uses, then written atomically (docs/configuration.md).
 */
export interface ConfigTarget {
  file: string
  scope: 'project' | 'user'
}

export interface ConfigEntry {
  key: string
  value: unknown
}

export interface ConfigChange {
  file: string
  key: string
  value?: unknown
  /** The project file was trusted before the change, so harness trusted what it wrote (docs/security.md). */
  retrusted?: boolean
}

type Json = Record<string, unknown>

export function configTarget(paths: ProjectPaths, env: NodeJS.ProcessEnv, user: boolean): ConfigTarget {
  return user ? { file: userConfigFile(env), scope: 'user' } : { file: paths.configFile, scope: 'project' }
}

/** Every settable key of the schema, `providers.*.command` style for records (for nearest-key hints). */
export function knownKeys(): string[] {
  const keys: string[] = []
  walk(HarnessConfigSchema as unknown as z.ZodMiniType, '', keys)
  return keys.filter((k) => k !== '$schema')
}

interface Def {
  type: string
  shape?: Record<string, z.ZodMiniType>
  innerType?: z.ZodMiniType
  valueType?: z.ZodMiniType
}

const defOf = (schema: z.ZodMiniType) => (schema as unknown as { _zod: { def: Def } })._zod.def

function unwrap(schema: z.ZodMiniType): z.ZodMiniType {
  let s = schema
  for (
    let def = defOf(s);
    (def.type === 'optional' || def.type === 'nullable') && def.innerType;
    def = defOf(s)
  )
    s = def.innerType
  return s
}

function walk(schema: z.ZodMiniType, prefix: string, out: string[]): void {
  const def = defOf(unwrap(schema))
  if (def.type === 'object' && def.shape) {
    for (const [name, child] of Object.entries(def.shape))
      walk(child, prefix ? `${prefix}.${name}` : name, out)
    return
  }
  if (def.type === 'record' && def.valueType) {
    walk(def.valueType, `${prefix}.*`, out)
    return
  }
  out.push(prefix)
}

/**
 * The parts of a key that names a setting, or a section of them (`defaults`, `providers.claude`). A model name
 * under `pricing` may hold dots (`pricing.gpt-5.1.input`: the model "gpt-5.1"): of the ways to read the key
 * against the schema, the one that reaches deepest into it is taken.
 */
function assertKnownKey(key: string): string[] {
  const known = knownKeys()
  const raw = key.split('.')
  let best: string[] | null = null
  if (raw.every(Boolean)) {
    for (const pattern of known) {
      for (const parts of groupings(pattern.split('.'), raw)) {
        if (parts.length > (best?.length ?? 0)) best = parts
      }
    }
  }
  if (best) return best
  const parts = raw
  const nearest = known
    .map((k) => ({ k, d: distance(k.replace('*', parts[1] ?? '*'), key) }))
    .sort((a, b) => a.d - b.d)[0]
  throw new UsageError(
    `unknown config key "${key}"`,
    nearest
      ? `did you mean "${nearest.k.replace('*', parts[1] ?? '<name>')}"? (run "harness config list --keys" for all)`
      : undefined,
    'UNKNOWN_CONFIG_KEY',
  )
}

/** Records whose names may hold dots: model names (`gpt-5.1`). A provider name is one part, so typos show. */
const DOTTED_NAMES = new Set(['pricing'])

/**
 * Each reading of `raw` as a prefix of `pattern`, where `*` takes one part as a name (under `DOTTED_NAMES`,
 * one or more parts joined).
 */
function groupings(pattern: string[], raw: string[], parent?: string): string[][] {
  if (raw.length === 0) return [[]]
  const [head, ...rest] = pattern
  if (head === undefined) return []
  const out: string[][] = []
  const takes = head === '*' && parent !== undefined && DOTTED_NAMES.has(parent) ? raw.length : 1
  for (let n = 1; n <= takes; n++) {
    const part = raw.slice(0, n).join('.')
    if (head !== '*' && part !== head) continue
    for (const tail of groupings(rest, raw.slice(n), head)) out.push([part, ...tail])
  }
  return out
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
      prev = tmp
    }
  }
  return row[b.length] as number
}

function readRaw(file: string): Json {
  // Validates first: a broken file is reported as such, never silently rewritten.
  readConfigFile(file)
  if (!entryExists(file)) return {}
  return parseJson(readText(file, 'config')) as Json
}

function lookup(config: Json, parts: string[]): unknown {
  let value: unknown = config
  for (const part of parts) {
    if (!value || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined
    value = (value as Json)[part]
  }
  return value
}

export function configGet(target: ConfigTarget, key: string): ConfigEntry {
  const value = lookup(readRaw(target.file), assertKnownKey(key))
  if (value === undefined) {
    throw new IllegalStateError(`"${key}" is not set in ${target.file}`, undefined, 'CONFIG_KEY_NOT_SET')
  }
  return { key, value }
}

/** Every set value as `key = value` lines, leaves only (lists and provider tokens stay JSON). */
export function configList(target: ConfigTarget): ConfigEntry[] {
  const entries: ConfigEntry[] = []
  const visit = (value: unknown, prefix: string) => {
    if (value && typeof value === 'object' && !Array.isArray(value) && prefix.split('.').length < 3) {
      for (const [k, v] of Object.entries(value as Json)) visit(v, prefix ? `${prefix}.${k}` : k)
    } else if (prefix) entries.push({ key: prefix, value })
  }
  visit(readRaw(target.file), '')
  return entries
}

/** A value as typed: JSON when it parses (`true`, `["npm","ci"]`, `null`), else the text itself. */
export function parseValue(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export interface TrustHooks {
  isTrusted: () => boolean
  trust: () => void
}

export function configSet(
  target: ConfigTarget,
  key: string,
  value: unknown,
  trust?: TrustHooks,
): ConfigChange {
  const parts = assertKnownKey(key)
  return change(target, key, (config) => setIn(config, parts, value), trust, value)
}

export function configUnset(target: ConfigTarget, key: string, trust?: TrustHooks): ConfigChange {
  const parts = assertKnownKey(key)
  return change(target, key, (config) => unsetIn(config, parts), trust)
}

function change(
  target: ConfigTarget,
  key: string,
  edit: (config: Json) => void,
  trust: TrustHooks | undefined,
  value?: unknown,
): ConfigChange {
  const wasTrusted = target.scope === 'project' && trust ? trust.isTrusted() : false
  const config = readRaw(target.file)
  edit(config)
  const result = z.safeParse(HarnessConfigSchema, config)
  if (!result.success) {
    const issue = result.error.issues[0]
    const where = issue?.path.length ? issue.path.join('.') : key
    throw new ConfigError(target.file, `${where}: ${issue?.message ?? 'invalid'} (nothing was written)`)
  }
  ensureDir(dirname(target.file))
  replaceFileDurably(target.file, `${target.file}.${process.pid}.tmp`, `${JSON.stringify(config, null, 2)}\n`)
  // Only a file the user already trusted stays trusted: harness never trusts what it did not see trusted.
  if (wasTrusted) trust?.trust()
  return {
    file: target.file,
    key,
    ...(value === undefined ? {} : { value }),
    ...(target.scope === 'project' ? { retrusted: wasTrusted } : {}),
  }
}

function setIn(config: Json, parts: string[], value: unknown): void {
  let node = config
  for (const part of parts.slice(0, -1)) {
    const next = node[part]
    if (!next || typeof next !== 'object' || Array.isArray(next)) node[part] = {}
    node = node[part] as Json
  }
  node[parts[parts.length - 1] as string] = value
}

function unsetIn(config: Json, parts: string[]): void {
  const chain: Json[] = [config]
  for (const part of parts.slice(0, -1)) {
    const next = chain[chain.length - 1]?.[part]
    if (!next || typeof next !== 'object') return
    chain.push(next as Json)
  }
  delete chain[chain.length - 1]?.[parts[parts.length - 1] as string]
  // Sections left empty go too, so the file stays as small as what was set.
  for (let i = chain.length - 1; i > 0; i--) {
    if (Object.keys(chain[i] as Json).length === 0) delete chain[i - 1]?.[parts[i - 1] as string]
  }
}
