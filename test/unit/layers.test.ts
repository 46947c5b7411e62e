import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { checkLayers, FS_ALLOWED, FS_NOT_YET_ROUTED } from '../helpers/check-layers.js'
import { tmpDir } from '../helpers/tmp.js'

// The layering rules of docs/design.md ("Layers"), checked on the real source tree.
describe('layers', () => {
  test('src/ keeps its layers one-way', () => {
    const found = checkLayers(join(import.meta.dirname, '../../src')).map((p) => `${p.file}: ${p.rule}`)
    expect(found).toEqual([])
  })

  test('the list of modules not yet routed through the door only shrinks: each one listed still imports fs', () => {
    const src = join(import.meta.dirname, '../../src')
    const stale = [...FS_NOT_YET_ROUTED, ...Object.keys(FS_ALLOWED)].filter(
      (file) => !/from\s*['"](?:node:)?fs(?:\/promises)?['"]/.test(readFileSync(join(src, file), 'utf8')),
    )
    expect(stale).toEqual([])
  })

  test('the check catches each kind of violation', () => {
    const src = tmpDir()
    const write = (path: string, text: string) => {
      mkdirSync(join(src, path, '..'), { recursive: true })
      writeFileSync(join(src, path), text)
    }
    write('cli/context.ts', 'export class Context {}\n')
    write('cli/output.ts', 'export const width = () => process.stdout.columns ?? process.cwd().length\n')
    write('cli/io.ts', 'export const io = () => ({ cwd: process.cwd(), env: process.env })\n')
    write(
      'commands/run.ts',
      "import { execa } from 'execa'\nexport const ok = () => execa('git', ['status'])\n",
    )
    write('git/git.ts', "import { execFile } from 'node:child_process'\nexecFile('git', ['status'])\n")
    write('sessions/a.ts', "import type { Context } from '../cli/context.js'\n")
    write('process/b.ts', "const { registerRun } = await import('../commands/run.js')\n")
    write('providers/c.ts', "import { spawn } from 'node:child_process'\nspawn(\"git\", ['log'])\n")
    write('sessions/d.ts', "process.stdout.write('hi')\nconst e = process.env.HOME\n")
    write('sessions/e.ts', 'export const fine = 1 // mentions cli/ and process.stdout in a comment\n')
    // The door to the disk: only disk/door.ts (and the modules named as never touching .harness/) import fs.
    write('disk/door.ts', "import * as fs from 'node:fs'\nexport const door = fs\n")
    write('process/identity.ts', "import { readFileSync } from 'node:fs'\nexport const stat = readFileSync\n")
    write('sessions/f.ts', "import { readFileSync } from 'node:fs'\nexport const r = readFileSync\n")
    write('render/g.ts', "import {\n  open,\n} from 'fs/promises'\nexport const o = open\n")
    write(
      'history/h.ts',
      "const { readFile } = await import('node:fs/promises')\nexport const r = readFile\n",
    )
    write('sessions/i.ts', "export const j = 1 // reads files through the door, never from 'node:fs'\n")
    const problems = checkLayers(src)
      .map((p) => `${p.file}: ${p.rule}`)
      .sort()
    expect(problems).toEqual([
      'cli/output.ts: reads process.cwd (not through CliIo)',
      'cli/output.ts: writes process.stdout (not through CliIo)',
      'commands/run.ts: git is run outside src/git/',
      'history/h.ts: imports node:fs (files are opened only through disk/door.ts)',
      'process/b.ts: imports commands/',
      'providers/c.ts: git is run outside src/git/',
      'render/g.ts: imports node:fs (files are opened only through disk/door.ts)',
      'sessions/a.ts: imports cli/',
      'sessions/d.ts: reads process.env',
      'sessions/d.ts: writes process.stdout',
      'sessions/f.ts: imports node:fs (files are opened only through disk/door.ts)',
    ])
  })
})
