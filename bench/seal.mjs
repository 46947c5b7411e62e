// Seals generated records as harness does (docs/security.md): HMAC-SHA256 with the user's 32-byte key
// ($XDG_STATE_HOME/harness/key) over the record without `seal`, in canonical JSON, followed by a newline and
// the project's real path; the record names that path (`project`) and the key's id (`seal_key`). A record
// sealed any other way is foreign: harness lists it without checking its processes and, for a seal without the
// project's path, checks it a second time to say why ("unscoped"), so the bench would measure other work.
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

function canonicalJson(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value))
    return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`
  return `{${Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
    .join(',')}}`
}

/** A function that returns `record` sealed for the project `projectDir` with the key under `stateHome` (made if missing). */
export function sealerFor(stateHome) {
  const file = join(stateHome, 'harness', 'key')
  if (!existsSync(file)) {
    mkdirSync(join(stateHome, 'harness'), { recursive: true, mode: 0o700 })
    writeFileSync(file, randomBytes(32), { mode: 0o600 })
  }
  const key = readFileSync(file)
  const keyId = createHash('sha256').update('harness seal key id\0').update(key).digest('hex').slice(0, 16)
  return (record, projectDir) => {
    const scope = realpathSync(projectDir)
    const { seal: _seal, sealed: _sealed, seal_problem: _problem, ...rest } = record
    const content = { ...rest, project: scope, seal_key: keyId }
    const text = `${canonicalJson(content)}\n${scope}`
    return { ...content, seal: createHmac('sha256', key).update(text).digest('hex') }
  }
}
