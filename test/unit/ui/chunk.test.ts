import { readdirSync, readFileSync } from 'node:fs'
import { join, posix, relative } from 'node:path'
import ts from 'typescript'
import { expect, test } from 'vitest'

// `harness ui` is the one command that loads Ink and React: they live in the dashboard's chunk (ui/dashboard.ts
// and what it imports statically), which the bundlers split at the one dynamic import of it (esbuild: the file
// dist/ui/dashboard.mjs beside the node bundle; bun: a chunk of the native executable that loads on first
// import). These are the import facts that make it so, read from the sources by TypeScript's parser.

const SRC = join(import.meta.dirname, '../../../src')

interface Imports {
  /** Value imports (`import … from`, `export … from`, `import '…'`): loaded with the module. */
  static: string[]
  /** `import('…')`: loaded when the code runs. */
  dynamic: string[]
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? files(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [relative(SRC, join(dir, entry.name)).split('\\').join('/')]
        : [],
  )
}

function resolveFrom(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier.split('/')[0] as string
  return posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, '.ts')
}

function importsOf(file: string): Imports {
  const source = ts.createSourceFile(file, readFileSync(join(SRC, file), 'utf8'), ts.ScriptTarget.Latest)
  const found: Imports = { static: [], dynamic: [] }
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.importClause?.isTypeOnly) found.static.push(resolveFrom(file, node.moduleSpecifier.text))
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      if (!node.isTypeOnly) found.static.push(resolveFrom(file, node.moduleSpecifier.text))
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.dynamic.push(resolveFrom(file, node.arguments[0].text))
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const graph = new Map(files(SRC).map((file) => [file, importsOf(file)]))

/** Everything `entry` loads with itself: its static imports, and theirs. */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>()
  const walk = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const next of graph.get(file)?.static ?? []) walk(next)
  }
  walk(entry)
  return seen
}

const importersOf = (target: string) =>
  [...graph].flatMap(([file, imports]) => [
    ...imports.static.filter((t) => t === target).map(() => ({ file, how: 'static' })),
    ...imports.dynamic.filter((t) => t === target).map(() => ({ file, how: 'dynamic' })),
  ])

const CHUNK = staticClosure('ui/dashboard.ts')

test('the dashboard chunk holds the Ink components and pure view code only: no service, no command', () => {
  const own = [...CHUNK].filter((f) => f.endsWith('.ts')).sort()
  expect(own).toEqual([
    'render/text.ts',
    'render/time.ts',
    'ui/app.ts',
    'ui/dashboard.ts',
    'ui/frame.ts',
    'ui/hooks.ts',
    'ui/keys.ts',
    'ui/on-key.ts',
    'ui/view.ts',
  ])
  expect([...CHUNK].filter((f) => !f.endsWith('.ts')).sort()).toEqual(['ink', 'react', 'string-width'])
})

test('only the ui command reaches it, and only by a dynamic import, from its action', () => {
  expect(importersOf('ui/dashboard.ts')).toEqual([{ file: 'cli/dashboard-run.ts', how: 'dynamic' }])
  expect(importersOf('cli/dashboard-run.ts')).toEqual([{ file: 'commands/ui.ts', how: 'dynamic' }])
  // Nothing else in the chunk is imported from outside it.
  for (const file of CHUNK) {
    if (!file.startsWith('ui/') || file === 'ui/dashboard.ts' || file === 'ui/port.ts') continue
    const outside = importersOf(file).filter((i) => !CHUNK.has(i.file))
    expect(outside, file).toEqual([])
  }
})

test('Ink and React are imported nowhere but in the chunk', () => {
  for (const name of ['ink', 'react']) {
    const users = importersOf(name).map((i) => i.file)
    expect(users.length, name).toBeGreaterThan(0)
    for (const user of users) expect(CHUNK.has(user), `${user} imports ${name}`).toBe(true)
  }
})

test("the entries and every command's static imports stay out of the chunk", () => {
  for (const entry of ['main.ts', 'native-main.ts', 'app/program.ts', 'commands/ui.ts', 'cli/dashboard.ts']) {
    const loaded = staticClosure(entry)
    expect(
      [...loaded].filter((f) => f.startsWith('ui/') && f !== 'ui/port.ts' && f !== 'ui/rows.ts'),
      entry,
    ).toEqual([])
    expect(loaded.has('ink') || loaded.has('react'), entry).toBe(false)
  }
})
