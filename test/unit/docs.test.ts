import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { tmpDir } from '../helpers/tmp.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** README.md and every Markdown file under docs/ (paths relative to `root`). */
function docFiles(root: string): string[] {
  const found = existsSync(join(root, 'README.md')) ? ['README.md'] : []
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.md')) found.push(path)
    }
  }
  if (existsSync(join(root, 'docs'))) walk('docs')
  return found.sort()
}

/** The text outside fenced code blocks and code spans, where a link is a link. */
function prose(text: string): string {
  return text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[^`]*?\1/g, '')
}

/** GitHub's anchors of a file's headings (github-slugger: duplicates get -1, -2, …). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const found = new Set<string>()
  const withoutCode = text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
  for (const [, heading = ''] of withoutCode.matchAll(/^#{1,6} +(.*?) *#*$/gm)) {
    const rendered = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '')
    const base = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    found.add(count ? `${base}-${count}` : base)
  }
  return found
}

/** Every relative link of the docs under `root` that leads nowhere: `file: target (why)`. */
function brokenLinks(root: string): string[] {
  const broken: string[] = []
  for (const file of docFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8')
    for (const [, target = ''] of prose(text).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue
      const [path = '', anchor] = target.split('#')
      const to = path ? resolve(dirname(join(root, file)), path) : join(root, file)
      if (!existsSync(to)) {
        broken.push(`${file}: ${target} (no such file)`)
      } else if (
        anchor !== undefined &&
        to.endsWith('.md') &&
        !anchors(readFileSync(to, 'utf8')).has(anchor)
      ) {
        broken.push(`${file}: ${target} (no heading "#${anchor}" in ${relative(root, to)})`)
      }
    }
  }
  return broken
}

/** The text of a file's headings, as rendered (code marks and link syntax dropped). */
function headings(text: string): string[] {
  const withoutCode = text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
  return [...withoutCode.matchAll(/^#{1,6} +(.*?) *#*$/gm)].map(([, heading = '']) =>
    heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, ''),
  )
}

/** Source, test, script and bench files: where comments point at the docs. */
function sourceFiles(root: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(ts|mts|mjs|cjs|js|sh)$/.test(entry.name) || dir === 'bin') found.push(path)
    }
  }
  for (const dir of ['src', 'test', 'scripts', 'bench', 'bin']) if (existsSync(join(root, dir))) walk(dir)
  return found.sort()
}

/** Files of a user's project that examples name (a chain's step writes docs/auth.md), not harness's docs. */
const EXAMPLE_DOCS = ['docs/auth.md', 'docs/models.md']

/**
 * Every `docs/<file>.md` a comment names that does not exist, and every section it quotes (`docs/x.md, "Section"`)
 * that no heading of that file begins with.
 */
function staleReferences(root: string): string[] {
  const stale: string[] = []
  for (const file of sourceFiles(root)) {
    if (file === join('test', 'unit', 'docs.test.ts')) continue
    const text = readFileSync(join(root, file), 'utf8')
    for (const [, doc = '', section] of text.matchAll(/\b(docs\/[\w/-]+\.md)(?:,? ?\(?"([^"\n]+)")?/g)) {
      if (EXAMPLE_DOCS.includes(doc)) continue
      if (!existsSync(join(root, doc))) stale.push(`${file}: ${doc}`)
      else if (
        section &&
        !headings(readFileSync(join(root, doc), 'utf8')).some((h) => h.startsWith(section))
      ) {
        stale.push(`${file}: ${doc}, "${section}"`)
      }
    }
  }
  return stale
}

/** Words as `wc -w` counts them: runs of characters between white space. */
function words(files: string[]): number {
  return files.reduce((n, file) => n + (readFileSync(join(ROOT, file), 'utf8').match(/\S+/g)?.length ?? 0), 0)
}

describe('the docs', () => {
  test('every relative link in README.md and docs/ leads to a file, and to a heading where it names one', () => {
    expect(docFiles(ROOT).length).toBeGreaterThan(15)
    expect(brokenLinks(ROOT)).toEqual([])
  })

  test('the link check finds a missing file and a missing heading, and passes code and good links', () => {
    const root = tmpDir()
    mkdirSync(join(root, 'docs', 'development'), { recursive: true })
    writeFileSync(join(root, 'README.md'), '# Top\n\n[ok](docs/a.md#two-words-here) [gone](docs/gone.md)\n')
    writeFileSync(
      join(root, 'docs', 'a.md'),
      '# A\n\n## Two `words` here\n\n## Two `words` here\n\n[dup](#two-words-here-1) [up](../README.md#top)\n' +
        '[bad](#nowhere) [deep](development/b.md#b) `[code](missing.md)`\n\n```sh\n[fenced](missing.md)\n```\n',
    )
    writeFileSync(join(root, 'docs', 'development', 'b.md'), '# B\n\n[web](https://example.com/x.md)\n')
    expect(brokenLinks(root)).toEqual([
      'README.md: docs/gone.md (no such file)',
      'docs/a.md: #nowhere (no heading "#nowhere" in docs/a.md)',
    ])
  })

  test('every docs file and section a comment in src/, test/, scripts/, bench/ or bin/ names exists', () => {
    expect(sourceFiles(ROOT).length).toBeGreaterThan(300)
    expect(staleReferences(ROOT)).toEqual([])
  })

  test('the reference check finds a missing file and a missing section', () => {
    const root = tmpDir()
    mkdirSync(join(root, 'docs'), { recursive: true })
    mkdirSync(join(root, 'src'), { recursive: true })
    writeFileSync(join(root, 'docs', 'a.md'), '# A\n\n## The `record` store\n')
    writeFileSync(
      join(root, 'src', 'x.ts'),
      '// docs/a.md, "The record" and (docs/a.md "The record store")\n// docs/a.md ("Gone") docs/b.md\n',
    )
    expect(staleReferences(root)).toEqual(['src/x.ts: docs/a.md, "Gone"', 'src/x.ts: docs/b.md'])
  })

  const files = docFiles(ROOT)
  const maintainers = files.filter((file) => file.startsWith(join('docs', 'development')))
  const users = files.filter((file) => !maintainers.includes(file))
  const backends = join('docs', 'backends.md')
  /** docs/backends.md's share of the users' 20,000 words. */
  const BACKENDS_SHARE = 2_500

  test("the users' docs other than backends.md stay within 20,000 words less backends.md's share of 2,500", () => {
    expect(users).toContain(join('docs', 'commands.md'))
    expect(words(users.filter((file) => file !== backends))).toBeLessThanOrEqual(20_000 - BACKENDS_SHARE)
  })

  test("docs/backends.md stays within its share, and the users' docs (README.md and docs/*.md) within 20,000 words, as wc -w counts", () => {
    expect(words([backends])).toBeLessThanOrEqual(BACKENDS_SHARE)
    expect(words(users)).toBeLessThanOrEqual(20_000)
  })

  test("the maintainers' notes (docs/development/) stay within 10,000 words", () => {
    expect(maintainers.length).toBeGreaterThan(3)
    expect(words(maintainers)).toBeLessThanOrEqual(10_000)
  })
})
