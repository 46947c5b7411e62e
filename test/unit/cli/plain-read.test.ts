import { readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import ts from 'typescript'
import { expect, test } from 'vitest'

const src = join(import.meta.dirname, '../../../src')

/** What loads with `module` (relative to src/): its static value imports, followed; packages by name. */
function loadedWith(module: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>()
  const packages = new Set<string>()
  const visit = (name: string): void => {
    if (modules.has(name)) return
    modules.add(name)
    const file = ts.createSourceFile(
      name,
      readFileSync(join(src, name), 'utf8'),
      ts.ScriptTarget.ES2022,
      false,
    )
    for (const statement of file.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier
      if (!specifier || !ts.isStringLiteral(specifier)) continue
      const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined
      const typeOnly =
        (ts.isImportDeclaration(statement) &&
          (clause?.isTypeOnly ||
            (clause !== undefined &&
              !clause.name &&
              clause.namedBindings !== undefined &&
              ts.isNamedImports(clause.namedBindings) &&
              clause.namedBindings.elements.every((element) => element.isTypeOnly)))) ||
        (ts.isExportDeclaration(statement) && statement.isTypeOnly)
      if (typeOnly) continue
      const text = specifier.text
      if (text.startsWith('.')) visit(normalize(join(dirname(name), text)).replace(/\.js$/, '.ts'))
      else if (!text.startsWith('node:')) packages.add(text)
    }
  }
  visit(module)
  return { modules, packages }
}

// docs/development/native.md ("Start-up"): the plain `session show` and `session path` run
// cli/session-read.ts (in the registry's reading group) with a Context, without commander, and reading a record
// loads no zod.
test('the plain session show and path load neither commander nor zod', () => {
  for (const module of ['cli/services/reading.ts', 'app/entry.ts']) {
    const { packages } = loadedWith(module)
    expect(
      [...packages].filter((name) => /^(zod|commander)(\/|$)/.test(name)),
      module,
    ).toEqual([])
  }
})

test('the walk follows imports to a package, and not a type-only import', () => {
  expect(loadedWith('providers/schema.ts').packages.has('zod/mini')).toBe(true)
  expect(loadedWith('providers/cost.ts').modules.has('providers/schema.ts')).toBe(false)
})
