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
    else if (/\.(ts|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path
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

interface Module {
  file: string
  exported: string[]
  /** Every name the module reads or calls (importing or re-exporting a name is not using it). */
  used: Set<string>
}

/** Each module under `dir`, by its path relative to `dir`: what it exports and what names it uses. */
function scan(dir: string): Module[] {
  const modules: Module[] = []
  for (const path of sourceFiles(dir)) {
    const file = relative(dir, path).split(sep).join('/')
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true)
    const exported: string[] = []
    const used = new Set<string>()
    for (const statement of source.statements) {
      if (!isExported(statement)) continue
      if (
        (ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement) ||
          ts.isEnumDeclaration(statement)) &&
        statement.name
      ) {
        exported.push(statement.name.text)
      } else if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) exported.push(declaration.name.text)
        }
      }
    }
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return
      if (ts.isIdentifier(node) && !isDeclaredName(node)) used.add(node.text)
      ts.forEachChild(node, visit)
    }
    visit(source)
    modules.push({ file, exported, used })
  }
  return modules
}

/** `file: name` of every value exported by a module under `srcDir` that nothing under `srcDir` uses. */
/**
 * Exports used only in their own module, left to the rooms another change is rewriting (the backends, stop
 * and recover, the run's start): the list may only shrink, and an entry that no longer names such an export
 * fails the check, so it goes when its room is done.
 */
export const HOME_ONLY_IN_FLIGHT: string[] = []

export function exportsUsedNowhere(srcDir: string): string[] {
  const modules = scan(srcDir)
  const used = new Set(modules.flatMap((module) => [...module.used]))
  return modules
    .flatMap(({ file, exported }) =>
      exported.filter((name) => !used.has(name)).map((name) => `${file}: ${name}`),
    )
    .filter((entry) => !(entry in NOT_YET_CALLED))
    .sort()
}

/**
 * `file: name` of every value a module under `srcDir` exports but only its own module uses: the export is
 * noise (the name belongs inside its module). A use from another module under `srcDir` or from a file under
 * one of `otherDirs` (the tests, the benches) counts.
 */
export function exportsUsedOnlyAtHome(srcDir: string, otherDirs: string[]): string[] {
  const modules = scan(srcDir)
  const everyModule = [...modules, ...otherDirs.flatMap((dir) => scan(dir))]
  return modules
    .flatMap((home) =>
      home.exported
        .filter((name) => everyModule.every((module) => module === home || !module.used.has(name)))
        .map((name) => `${home.file}: ${name}`),
    )
    .filter((entry) => !(entry in NOT_YET_CALLED))
    .sort()
}
