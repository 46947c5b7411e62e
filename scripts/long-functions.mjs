// Prints what is too long under a source folder (src/ unless given) and exits 1 when there is any:
// - every function over 80 lines (declarations, methods, arrows, function expressions; counted from the line it
//   starts on to the line it ends on), except the pure data tables named in ALLOWED below;
// - every file over 500 lines that the list at the end of docs/development/design.md ("Files over 500 lines") does not name
//   with its reason. The design document is `<src>/../docs/development/design.md` unless `--design <path>` names another.
// `--json` prints `{ functions: [{ file, line, name, lines }], files: [{ file, lines }] }` (paths relative to the
// source folder, forward slashes). Run by test/unit/layers.test.ts.
import { existsSync, readFileSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { sourceFiles } from './source-files.mjs'

export const MAX_FUNCTION_LINES = 80
export const MAX_FILE_LINES = 500
/**
 * Functions that are pure data tables (one entry per line, no logic between them), as `<file>:<name>` with why:
 * splitting such a table would scatter one table over several functions. None today; keep it short.
 */
export const ALLOWED = {}
const SOURCE = /\.(ts|mts)$/

/** What a function is called: its own name, the variable or property it is assigned to, else `<anonymous>`. */
function nameOf(node) {
  if (node.name) return node.name.getText()
  const parent = node.parent
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)))
    return parent.name.getText()
  return node.kind === ts.SyntaxKind.Constructor ? 'constructor' : '<anonymous>'
}

/** The functions of one module longer than `max` lines, as `{ name, line, lines }` (line 1-based). */
export function longFunctionsIn(code, fileName = 'module.ts', max = MAX_FUNCTION_LINES) {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found = []
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.end).line
      const lines = end - start + 1
      if (lines > max) found.push({ name: nameOf(node), line: start + 1, lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/**
 * The files docs/development/design.md says may be over 500 lines: the bullets of its section "Files over 500 lines", each
 * beginning with the file's path under src/ in backquotes, then why.
 */
export function filesExplained(designText) {
  const section = designText.split(/^#+ Files over 500 lines\s*$/m)[1]
  if (section === undefined) return []
  const body = section.split(/^#+ /m)[0] ?? ''
  return [...body.matchAll(/^- `(?:src\/)?([^`]+)`\s*\S/gm)].map(([, file]) => file)
}

/** Everything too long under `srcDir`, judged against the design document at `designFile`. */
export function tooLong(srcDir, designFile = join(srcDir, '..', 'docs', 'development', 'design.md')) {
  const explained = existsSync(designFile) ? filesExplained(readFileSync(designFile, 'utf8')) : []
  const functions = []
  const files = []
  for (const path of sourceFiles(srcDir, SOURCE)) {
    const file = relative(srcDir, path).split(sep).join('/')
    const code = readFileSync(path, 'utf8')
    for (const fn of longFunctionsIn(code, path)) {
      if (!(`${file}:${fn.name}` in ALLOWED)) functions.push({ file, ...fn })
    }
    const lines = code.split('\n').length - (code.endsWith('\n') ? 1 : 0)
    if (lines > MAX_FILE_LINES && !explained.includes(file)) files.push({ file, lines })
  }
  functions.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file))
  files.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file))
  return { functions, files }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const json = args.includes('--json')
  const designAt = args.indexOf('--design')
  const design = designAt >= 0 ? args[designAt + 1] : undefined
  const srcDir = resolve(
    args.find((arg, i) => !arg.startsWith('--') && !(designAt >= 0 && i === designAt + 1)) ?? 'src',
  )
  const found = tooLong(srcDir, design === undefined ? undefined : resolve(design))
  if (json) {
    process.stdout.write(`${JSON.stringify(found)}\n`)
  } else {
    for (const fn of found.functions) {
      process.stdout.write(`${fn.lines}\t${fn.file}:${fn.line}\t${fn.name}\n`)
    }
    for (const file of found.files) {
      process.stdout.write(
        `${file.lines}\t${file.file}\t(over ${MAX_FILE_LINES} lines, not in docs/development/design.md)\n`,
      )
    }
  }
  process.exitCode = found.functions.length || found.files.length ? 1 : 0
}
