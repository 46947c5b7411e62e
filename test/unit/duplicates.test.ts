import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
// @ts-expect-error: a plain script, without types
import { duplicateBlocks, duplicatesIn, KNOWN, knownAs } from '../../scripts/duplicate-blocks.mjs'

interface Block {
  lines: number
  places: { file: string; line: number }[]
}

const root = join(import.meta.dirname, '../..')

// docs/development/README.md: no block of six or more similar lines repeats in src/, test/ or bench/ (KNOWN in
// scripts/duplicate-blocks.mjs would name one with why; it is empty).
describe('duplicate blocks', () => {
  const blocks: Block[] = duplicatesIn(root, ['src', 'test', 'bench'])

  test('none in src/, test/ or bench/ but the known ones', () => {
    expect(blocks.filter((block) => !knownAs(block))).toEqual([])
  })

  test('every known one is still there (the list only shrinks)', () => {
    const known = new Set(blocks.map((block) => knownAs(block)))
    expect(KNOWN.filter((entry: unknown) => !known.has(entry))).toEqual([])
  })

  const body = [
    'function total(items) {',
    '  let sum = 0',
    '  for (const item of items) {',
    '    if (item.skip) continue',
    '    sum += item.price * item.count',
    '  }',
    "  log('total', sum)",
    '  return sum',
    '}',
  ]

  test('finds a block repeated in two files, whatever its indentation and comments', () => {
    const other = body.map((line) => `    ${line.replace(/ +/g, '  ')}`)
    other.splice(3, 0, '    // a comment between', '')
    const found: Block[] = duplicateBlocks([
      { name: 'a.ts', text: ['const x = 1', ...body].join('\n') },
      { name: 'b.ts', text: other.join('\n') },
    ])
    expect(found).toEqual([
      {
        lines: 7,
        places: [
          { file: 'a.ts', line: 2 },
          { file: 'b.ts', line: 1 },
        ],
      },
    ])
  })

  test('not five lines, nor import lists, nor a repeat of one line within a file', () => {
    const five = body.filter((line) => !line.includes('continue'))
    const imports = ["import { a } from './a.js'", "import { b } from './b.js'", 'import {', '  c,', '  d,']
    const lines = [...imports, "import { e } from './e.js'", "import { f } from './f.js'", "} from './g.js'"]
    expect(
      duplicateBlocks([
        { name: 'a.ts', text: [...five, ...lines].join('\n') },
        { name: 'b.ts', text: [...five.slice(0, 5), ...lines].join('\n') },
        { name: 'c.ts', text: Array(20).fill('count++').join('\n') },
      ]),
    ).toEqual([])
  })

  test('a table of keys and literal values is data; keys whose values are computed are not', () => {
    const keys = ['s', 'd', 'l', 'k', 'p', 'r', 'm'].map((key, i) => `  ${key}: 'value ${i}',`)
    const table = ['const meaning = {', ...keys, '}'].join('\n')
    expect(
      duplicateBlocks([
        { name: 'a.ts', text: table },
        { name: 'b.ts', text: table },
      ]),
    ).toEqual([])
    const computed = ['const meaning = {', ...keys.map((line) => line.replace(/'(.*)'/, "label('$1')")), '}']
    const found: Block[] = duplicateBlocks([
      { name: 'a.ts', text: computed.join('\n') },
      { name: 'b.ts', text: computed.join('\n') },
    ])
    expect(found.map((block) => block.lines)).toEqual([8])
  })
})
