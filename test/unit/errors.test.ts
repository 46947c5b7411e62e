import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'
import { ERROR_CODES, ExitCode } from '../../src/errors.js'

const src = join(import.meta.dirname, '../../src')

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sources(path)
    else if (entry.name.endsWith('.ts')) yield path
  }
}

/** The exit code each error class gives every code it is built with. */
const CLASS_EXIT: Record<string, number> = {
  UsageError: ExitCode.Usage,
  IllegalStateError: ExitCode.IllegalState,
  ExternalToolError: ExitCode.ExternalTool,
}

/** Every string literal in src/ that looks like a code, and each code thrown with an exit code it states. */
function scan(): { literals: Set<string>; thrown: { code: string; exit: number; at: string }[] } {
  const literals = new Set<string>()
  const thrown: { code: string; exit: number; at: string }[] = []
  for (const path of sources(src)) {
    const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true)
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) && /^[A-Z][A-Z0-9_]{2,}$/.test(node.text)) literals.add(node.text)
      const call =
        ts.isNewExpression(node) ||
        (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword)
      if (call && (node as ts.CallExpression).arguments) {
        const { expression, arguments: args = ts.factory.createNodeArray() } = node as ts.CallExpression
        const at = `${path.slice(src.length + 1)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
        const codes = args.filter(ts.isStringLiteral).filter((arg) => arg.text in ERROR_CODES)
        const stated = args.find(
          (arg) => ts.isPropertyAccessExpression(arg) && arg.expression.getText() === 'ExitCode',
        ) as ts.PropertyAccessExpression | undefined
        const exit = stated
          ? ExitCode[stated.name.text as keyof typeof ExitCode]
          : CLASS_EXIT[expression.getText()]
        for (const code of codes) if (exit !== undefined) thrown.push({ code: code.text, exit, at })
      }
      ts.forEachChild(node, visit)
    }
    visit(file)
  }
  return { literals, thrown }
}

describe('error codes (src/errors.ts ERROR_CODES)', () => {
  const { literals, thrown } = scan()

  test('every code in the table is used in src/', () => {
    expect(Object.keys(ERROR_CODES).filter((code) => !literals.has(code))).toEqual([])
  })

  test('every code thrown with an exit code is thrown with the one the table gives it', () => {
    const table = ERROR_CODES as Record<string, { exit: number | readonly number[] }>
    const allowed = (code: string) => [table[code]?.exit ?? []].flat()
    expect(thrown.filter(({ code, exit }) => !allowed(code).includes(exit))).toEqual([])
    expect(thrown.length).toBeGreaterThan(100)
  })

  test('each says what it means, in one short line', () => {
    for (const [code, { meaning }] of Object.entries(ERROR_CODES)) {
      expect(meaning.length, code).toBeGreaterThan(5)
      expect(meaning.length, code).toBeLessThanOrEqual(80)
    }
  })
})
