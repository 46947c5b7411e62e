// docs/development/design.md ("git"): nothing in src/ exists only for tests. Every exported function, class
// or constant is used somewhere in src/ (in its own module or another); tests go through what the product
// calls, or test a pure function the product uses. Checked by test/unit/exports.test.ts. Names are matched by
// parsing alone (no type checking, so it is quick): a name used for something else elsewhere can hide an
// unused export, never the other way round.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import ts from 'typescript'

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sourceFiles(path)
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path
  }
}

function isExported(node: ts.Node): boolean {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
  )
}

/** The name a declaration introduces, when `node` is that name. */
function isDeclaredName(node: ts.Identifier): boolean {
  const parent = node.parent
  return (
    (ts.isFunctionDeclaration(parent) ||
      ts.isClassDeclaration(parent) ||
      ts.isVariableDeclaration(parent) ||
      ts.isEnumDeclaration(parent) ||
      ts.isInterfaceDeclaration(parent) ||
      ts.isTypeAliasDeclaration(parent)) &&
    parent.name === node
  )
}

/**
 * Exports built ahead of their caller, each with why: the list may only shrink. The Slurm engine is built and
 * tested against a real cluster before the backend seam (SPEC §14) that will call it; its own parts are all
 * called by it, so only its entry is waiting.
 */
export const NOT_YET_CALLED: Record<string, string> = {
  'sessions/backends/slurm/index.ts: slurmEngine': 'the Slurm engine, put behind the backend seam next',
}

/** `file: name` of every value exported by a module under `srcDir` that nothing under `srcDir` uses. */
export function exportsUsedNowhere(srcDir: string): string[] {
  const exported: { file: string; name: string }[] = []
  const used = new Set<string>()
  for (const path of sourceFiles(srcDir)) {
    const file = relative(srcDir, path).split(sep).join('/')
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true)
    for (const statement of source.statements) {
      if (!isExported(statement)) continue
      if (
        (ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement) ||
          ts.isEnumDeclaration(statement)) &&
        statement.name
      ) {
        exported.push({ file, name: statement.name.text })
      } else if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) exported.push({ file, name: declaration.name.text })
        }
      }
    }
    const visit = (node: ts.Node): void => {
      // Importing or re-exporting a name is not using it: calling or reading it is.
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return
      if (ts.isIdentifier(node) && !isDeclaredName(node)) used.add(node.text)
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return exported
    .filter(({ name }) => !used.has(name))
    .map(({ file, name }) => `${file}: ${name}`)
    .filter((entry) => !(entry in NOT_YET_CALLED))
    .sort()
}
