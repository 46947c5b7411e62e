import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import {
  ARCHIVE_FORMAT,
  filesUnder,
  hashFile,
  MANIFEST,
  type Manifest,
  MEMBER_PATTERN,
  readArchive,
  writeArchive,
} from '../../../src/history/archive-file.js'
import { tmpDir } from '../../helpers/tmp.js'

/** A manifest of no session and no member yet. */
function emptyManifest(): Manifest {
  return {
    format: ARCHIVE_FORMAT,
    version: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    harness_version: 'test',
    sessions: [],
    members: [],
  }
}

/** Packs `files` with a manifest of their real hashes, then lets `edit` change the manifest or the files. */
async function pack(
  files: Record<string, string>,
  edit: (manifest: Manifest, staging: string) => void = () => {},
): Promise<string> {
  const dir = tmpDir()
  const staging = join(dir, 'staging')
  const manifest = emptyManifest()
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(staging, path, '..'), { recursive: true })
    writeFileSync(join(staging, path), content)
    manifest.members.push({ path, ...(await hashFile(join(staging, path))) })
  }
  edit(manifest, staging)
  writeFileSync(join(staging, MANIFEST), JSON.stringify(manifest))
  const file = join(dir, 'a.tar.gz')
  await writeArchive(file, staging, manifest)
  return file
}

const files = { 'sessions/ab12.json': '{"id":"ab12"}\n', 'logs/ab12.log': 'hello\n' }

test('a good archive reads back, and extracts exactly its members', async () => {
  const file = await pack(files)
  const manifest = await readArchive(file)
  expect(manifest.members.map((m) => m.path)).toEqual(Object.keys(files))
})

test('a member whose bytes differ from the manifest is caught even inside a valid gzip', async () => {
  const file = await pack(files, (_manifest, staging) =>
    writeFileSync(join(staging, 'logs/ab12.log'), 'HELLO\n'),
  )
  await expect(readArchive(file)).rejects.toThrow(/logs\/ab12\.log does not match its sha256/)
})

test('a missing member, an unlisted one and a name outside the layout are each refused', async () => {
  const dir = tmpDir()
  const manifest = emptyManifest()
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
  const log = await hashFile(join(dir, 'logs/ab12.log'))
  const tar = await import('tar')
  const packed = async (members: Manifest['members'], names: string[]) => {
    writeFileSync(join(dir, MANIFEST), JSON.stringify({ ...manifest, members }))
    const file = join(dir, `${names.length}-${members.length}.tar.gz`)
    await tar.create({ gzip: true, file, cwd: dir, portable: true }, [MANIFEST, ...names])
    return file
  }
  const listed = { path: 'logs/ab12.log', ...log }
  await expect(readArchive(await packed([listed], []))).rejects.toThrow(/logs\/ab12\.log is missing/)
  await expect(readArchive(await packed([], ['logs/ab12.log']))).rejects.toThrow(/not in the manifest/)
  mkdirSync(join(dir, 'other'))
  writeFileSync(join(dir, 'other', 'x'), '')
  await expect(readArchive(await packed([listed], ['logs/ab12.log', 'other/x']))).rejects.toThrow(
    /unexpected member "other\/x"/,
  )
})

test('member names stay inside their folders: no "." or ".." component, no other top folder', () => {
  for (const good of [
    'sessions/ab12.json',
    'logs/ab12.log',
    'git/ab12.bundle',
    'agents/ab12/a/.hidden',
    'agents/ab12/x..y',
  ])
    expect(MEMBER_PATTERN.test(good), good).toBe(true)
  for (const bad of [
    'agents/ab12/../../../etc/passwd',
    'agents/ab12/./x',
    'agents/ab12/..',
    'sessions/../x.json',
    '/etc/passwd',
    'other/x',
    'agents/ab12/',
  ])
    expect(MEMBER_PATTERN.test(bad), bad).toBe(false)
})

test('a member whose tar header declares another size than its manifest stops the read at its header', async () => {
  const file = await pack(files, (manifest) => {
    const log = manifest.members.find((m) => m.path === 'logs/ab12.log')
    if (log) log.size = 3
  })
  await expect(readArchive(file)).rejects.toThrow(/member logs\/ab12\.log is 6 bytes, its manifest says 3/)
})

test('an extracting read that fails leaves none of the files it wrote', async () => {
  const file = await pack(files, (_manifest, staging) =>
    writeFileSync(join(staging, 'logs/ab12.log'), 'HELLO\n'),
  )
  const out = tmpDir()
  await expect(readArchive(file, out)).rejects.toThrow(/does not match its sha256/)
  expect(filesUnder(out)).toEqual([])
})
