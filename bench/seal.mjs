// Seals generated records as harness does (docs/security.md): HMAC-SHA256 with the user's 32-byte key
// ($XDG_STATE_HOME/harness/key) over the record without `seal`, in canonical JSON. An unsealed record is foreign:
// harness lists it without checking its processes, so a benchmark of unsealed records would measure less work.
import { createHmac, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
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

/** A function that returns `record` sealed with the key under `stateHome` (made if missing). */
export function sealerFor(stateHome) {
  const file = join(stateHome, 'harness', 'key')
  if (!existsSync(file)) {
    mkdirSync(join(stateHome, 'harness'), { recursive: true, mode: 0o700 })
    writeFileSync(file, randomBytes(32), { mode: 0o600 })
  }
  const key = readFileSync(file)
  return (record) => {
    const { seal: _seal, sealed: _sealed, ...content } = record
    return { ...content, seal: createHmac('sha256', key).update(canonicalJson(content)).digest('hex') }
  }
}
