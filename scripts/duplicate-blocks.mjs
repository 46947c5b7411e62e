// Prints the blocks of six or more similar lines that appear more than once in src/, test/ and bench/ (or the
// folders given), and exits 1 when there is any that KNOWN below does not excuse. Lines are compared with their
// whitespace normalised (runs of blanks to one, ends trimmed); blank lines, comment lines and lines of
// punctuation alone (a closing `})` says nothing) are left out. A block is found through a window of six lines:
// every window is hashed, windows with the same hash are the same lines, and windows that follow each other in
// every place join into one longer block. A window of which fewer than half the lines are more than
// boilerplate (BOILERPLATE below: import lists, hooks, one-item lines of a table) is no block.
// `--json` prints every block as `[{ lines, places: [{ file, line }], known }]` (`known`: why it stays, when
// KNOWN excuses it; paths relative to the current folder, `line` 1-based). Run by test/unit/duplicates.test.ts.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

export const WINDOW = 6
const SOURCE = /\.(ts|tsx|mts|mjs|cjs|js)$/

/**
 * Boilerplate that may repeat, each with why; a window made only of such lines is not a block. Keep it short:
 * anything else that repeats belongs in one shared function.
 */
export const BOILERPLATE = [
  // Import lists: two modules needing the same names say so each at their top.
  /^(import|export) .* from '[^']+'$|^(import|export) \{$|^(type )?[\w$]+( as [\w$]+)?,$|^\} from '[^']+'$/,
  // A test's plain set-up and tear-down hooks.
  /^(beforeEach|afterEach|beforeAll|afterAll)\(/,
  // One item of a list or table the formatter put one a line (an argv, a table's column, a key and its
  // literal value): data, not logic.
  /^(('[^']*'|[\w$]+): )?('[^']*'|"[^"]*"|`[^`$]*`|[\w$.]+|-?[\d_.]+),?$/,
]

/**
 * Repeats that stay, named by the files they are in (a block in exactly these files), each with why. An entry
 * that no longer names a repeat fails the check (test/unit/duplicates.test.ts), so the list only shrinks.
 */
/** @type {{ files: string[], why: string }[]} */
export const KNOWN = []

const filesOf = (block) => [...new Set(block.places.map((place) => place.file))].sort().join(' ')

/** The KNOWN entry that excuses `block`, if any. */
export function knownAs(block) {
  return KNOWN.find((entry) => [...entry.files].sort().join(' ') === filesOf(block))
}

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'fixtures') yield* sourceFiles(path)
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path
  }
}

/** The lines of `text` that take part in a comparison, normalised, with their 1-based line numbers. */
export function significantLines(text) {
  const lines = []
  let inComment = false
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim().replace(/\s+/g, ' ')
    if (inComment) {
      if (line.includes('*/')) inComment = false
      continue
    }
    if (line.startsWith('/*')) {
      inComment = !line.includes('*/')
      continue
    }
    if (line === '' || line.startsWith('//') || /^[\p{P}\s]*$/u.test(line)) continue
    lines.push({ text: line, line: index + 1 })
  }
  return lines
}

const isBoilerplate = (line) => BOILERPLATE.some((pattern) => pattern.test(line))

/** The repeated blocks among `files` (`{ name, text }`), longest first. */
export function duplicateBlocks(files) {
  const windows = new Map()
  const parsed = files.map(({ name, text }) => ({ name, lines: significantLines(text) }))
  for (const [fileIndex, { lines }] of parsed.entries()) {
    for (let start = 0; start + WINDOW <= lines.length; start++) {
      const window = lines.slice(start, start + WINDOW)
      // A window that is mostly boilerplate is not a block (a shared line or two between import lists).
      if (window.filter((entry) => !isBoilerplate(entry.text)).length < WINDOW / 2) continue
      const hash = createHash('sha1')
        .update(window.map((entry) => entry.text).join('\n'))
        .digest('hex')
      const places = windows.get(hash) ?? []
      places.push({ fileIndex, start })
      windows.set(hash, places)
    }
  }
  // Join windows that follow each other: a place continues a block when the window one line earlier at the
  // same place repeated with the same partners.
  const seen = new Set()
  const blocks = []
  const key = (fileIndex, start) => `${fileIndex}:${start}`
  const hashAt = new Map()
  for (const [hash, places] of windows) {
    if (places.length < 2) continue
    for (const place of places) hashAt.set(key(place.fileIndex, place.start), hash)
  }
  for (const [hash, places] of windows) {
    if (places.length < 2 || seen.has(hash)) continue
    const first = places[0]
    // Only start from a window whose predecessor did not repeat in the same way (else it is inside a block).
    const before = hashAt.get(key(first.fileIndex, first.start - 1))
    if (before !== undefined && windows.get(before).length === places.length) continue
    let length = WINDOW
    let next = hashAt.get(key(first.fileIndex, first.start + 1))
    while (next !== undefined && windows.get(next).length === places.length) {
      seen.add(next)
      length++
      next = hashAt.get(key(first.fileIndex, first.start + length - WINDOW + 1))
    }
    seen.add(hash)
    blocks.push({
      lines: length,
      places: places.map(({ fileIndex, start }) => ({
        file: parsed[fileIndex].name,
        line: parsed[fileIndex].lines[start].line,
      })),
    })
  }
  // Overlapping windows in one file (a run of identical lines) are one block, not a repeat of itself.
  return blocks
    .filter((block) => new Set(block.places.map((place) => `${place.file}`)).size > 1 || !overlaps(block))
    .sort((a, b) => b.lines - a.lines)
}

function overlaps(block) {
  const lines = block.places.map((place) => place.line).sort((a, b) => a - b)
  return lines.every((line, index) => index === 0 || line - lines[index - 1] < WINDOW)
}

/** The repeated blocks in the folders `dirs`, paths relative to `root`. */
export function duplicatesIn(root, dirs) {
  const files = dirs.flatMap((dir) =>
    [...sourceFiles(join(root, dir))].map((path) => ({
      name: relative(root, path).split(sep).join('/'),
      text: readFileSync(path, 'utf8'),
    })),
  )
  return duplicateBlocks(files)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const json = args.includes('--json')
  const dirs = args.filter((arg) => arg !== '--json')
  const blocks = duplicatesIn(process.cwd(), dirs.length > 0 ? dirs : ['src', 'test', 'bench'])
  const unexcused = blocks.filter((block) => !knownAs(block))
  if (json)
    console.log(
      JSON.stringify(
        blocks.map((block) => ({ ...block, known: knownAs(block)?.why })),
        null,
        2,
      ),
    )
  else
    for (const block of unexcused)
      console.log(`${block.lines} lines: ${block.places.map((p) => `${p.file}:${p.line}`).join(', ')}`)
  process.exitCode = unexcused.length > 0 ? 1 : 0
}
