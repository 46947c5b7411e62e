// Prints every import cycle under a source folder (src/ unless given), between modules and between folders,
// and exits 1 when there is any. Every relative import counts: static (`import … from`, `export … from`,
// `import '…'`, `import type`) and dynamic (`await import('…')`) alike, since a cycle closed only by a lazy
// import is still a cycle in the design. Folders are checked at every level: inside each folder, its subfolders
// and its own files are the rooms, and an import between two rooms must not close a circle among them (so the
// files at the top of src/ are rooms beside cli/ and sessions/, and sessions/removal/ is a room beside the
// files and the other folders of sessions/). `--json` prints `{ modules, folders }`, each a list of cycles (a cycle is
// a list of names, the first repeated at the end). Run by test/unit/layers.test.ts.
import { readFileSync } from 'node:fs'
import { dirname, join, posix, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { sourceFiles } from './source-files.mjs'

const SOURCE = /\.(ts|mts|js|mjs)$/
/** At most this many cycles are printed for one knot of modules that all reach each other. */
const PER_KNOT = 200

/**
 * The relative specifiers a module imports, read by TypeScript's parser (so a comment or a string that looks
 * like an import is none): `import`/`export … from`, `import '…'`, `import('…')` and `import('…').Type`.
 */
export function importsOf(code, fileName = 'module.ts') {
  const found = []
  const visit = (node) => {
    let specifier
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      specifier = node.moduleSpecifier
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      specifier = node.arguments[0]
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      specifier = node.argument.literal
    }
    if (specifier && ts.isStringLiteralLike(specifier) && specifier.text.startsWith('.'))
      found.push(specifier.text)
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS))
  return found
}

/** `a/b.js` → `a/b.ts` when that is the file (NodeNext specifiers name the emitted file). */
function resolveSpecifier(files, from, specifier) {
  const target = posix.normalize(posix.join(posix.dirname(from), specifier))
  const stem = target.replace(/\.(js|mjs|ts|mts)$/, '')
  for (const candidate of [
    target,
    `${stem}.ts`,
    `${stem}.mts`,
    `${stem}.js`,
    `${stem}.mjs`,
    `${stem}/index.ts`,
  ]) {
    if (files.has(candidate)) return candidate
  }
  return undefined
}

/** The import graph under `srcDir`: module name (relative, forward slashes) → the modules it imports. */
export function importGraph(srcDir) {
  const root = resolve(srcDir)
  const names = [...sourceFiles(root, SOURCE)].map((path) => relative(root, path).split(sep).join('/'))
  const files = new Set(names)
  const graph = new Map()
  for (const name of names) {
    const code = readFileSync(join(root, name), 'utf8')
    const targets = new Set()
    for (const specifier of importsOf(code, name)) {
      const target = resolveSpecifier(files, name, specifier)
      if (target !== undefined && target !== name) targets.add(target)
    }
    graph.set(name, [...targets].sort())
  }
  return graph
}

/**
 * The two rooms an import joins: below the deepest folder holding both modules, the entry (a subfolder, or a
 * file of that folder) that holds each. `sessions/a.ts → sessions/removal/b.ts` joins `sessions/a` and
 * `sessions/removal/`; `render/x.ts → history/y.ts` joins `render/` and `history/`; a file at the top is a room
 * of its own; two files of one folder are two rooms of it.
 */
export function roomsOf(from, to) {
  const a = from.split('/')
  const b = to.split('/')
  let common = 0
  while (common < a.length - 1 && common < b.length - 1 && a[common] === b[common]) common++
  const room = (parts) => {
    const head = parts.slice(0, common + 1).join('/')
    return common + 1 < parts.length ? `${head}/` : head.replace(SOURCE, '')
  }
  return [room(a), room(b)]
}

/** Rooms (folders, and the files beside them) and the rooms they import, each pair of siblings in one folder. */
export function folderGraph(graph) {
  const folders = new Map()
  for (const [name, targets] of graph) {
    for (const target of targets) {
      const [from, to] = roomsOf(name, target)
      const set = folders.get(from) ?? new Set()
      set.add(to)
      folders.set(from, set)
      if (!folders.has(to)) folders.set(to, new Set())
    }
  }
  return new Map([...folders].map(([name, set]) => [name, [...set].sort()]))
}

/** Strongly connected components with more than one node (Tarjan), each sorted, in a stable order. */
function knots(graph) {
  let index = 0
  const indices = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  const visit = (node) => {
    indices.set(node, index)
    low.set(node, index)
    index++
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node), low.get(next)))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indices.get(next)))
    }
    if (low.get(node) === indices.get(node)) {
      const component = []
      let member
      do {
        member = stack.pop()
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of [...graph.keys()].sort()) if (!indices.has(node)) visit(node)
  return found.sort((a, b) => a[0].localeCompare(b[0]))
}

/** The elementary cycles inside one knot (Johnson's search, rooted at each member in turn), up to `limit`. */
function cyclesIn(graph, members, limit) {
  const cycles = []
  const order = [...members].sort()
  for (let i = 0; i < order.length && cycles.length < limit; i++) {
    const start = order[i]
    const allowed = new Set(order.slice(i))
    const path = [start]
    const onPath = new Set([start])
    const walk = (node) => {
      for (const next of graph.get(node) ?? []) {
        if (cycles.length >= limit) return
        if (!allowed.has(next)) continue
        if (next === start) cycles.push([...path, start])
        else if (!onPath.has(next)) {
          path.push(next)
          onPath.add(next)
          walk(next)
          path.pop()
          onPath.delete(next)
        }
      }
    }
    walk(start)
  }
  return cycles.sort((a, b) => a.length - b.length || a.join().localeCompare(b.join()))
}

export function findCycles(srcDir) {
  const modules = importGraph(srcDir)
  const folders = folderGraph(modules)
  const all = (graph) => knots(graph).flatMap((knot) => cyclesIn(graph, knot, PER_KNOT))
  // A circle of files alone is a module cycle, printed as one already.
  const throughFolder = (cycle) => cycle.some((room) => room.endsWith('/'))
  return { modules: all(modules), folders: all(folders).filter(throughFolder) }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const json = args.includes('--json')
  const dir = args.find((a) => !a.startsWith('--')) ?? join(dirname(fileURLToPath(import.meta.url)), '../src')
  const { modules, folders } = findCycles(dir)
  if (json) process.stdout.write(`${JSON.stringify({ modules, folders })}\n`)
  else {
    for (const [title, cycles] of [
      ['module', modules],
      ['folder', folders],
    ]) {
      for (const cycle of cycles) process.stdout.write(`${title} cycle: ${cycle.join(' → ')}\n`)
    }
    process.stdout.write(`${modules.length} module cycles, ${folders.length} folder cycles\n`)
  }
  process.exitCode = modules.length + folders.length > 0 ? 1 : 0
}
