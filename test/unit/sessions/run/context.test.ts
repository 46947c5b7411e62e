import { describe, expect, test } from 'vitest'
import { taskDiffers, taskHash } from '../../../../src/sessions/record/task.js'
import {
  buildContextBlock,
  type ContextSource,
  promptWithContext,
} from '../../../../src/sessions/run/context.js'

const source = (over: Partial<ContextSource> = {}): ContextSource => ({
  id: 'a1b2c3d4',
  task: 'add the login endpoint\nwith tests',
  status: 'COMPLETED',
  exit_code: 0,
  branch: 'harness/a1b2c3d4',
  files: ['src/login.ts', 'test/login.test.ts'],
  stat: ' src/login.ts | 40 +++\n 1 file changed',
  checkpoints: ['#0 run-end: end of run (checkpoint 0)'],
  final_message: 'Added POST /login.\nAll tests pass.',
  ...over,
})

describe('context block', () => {
  test('holds every part of each session, in order', () => {
    const block = buildContextBlock(
      [source(), source({ id: 'ffff0000', status: 'FAILED', exit_code: 2, branch: null })],
      16384,
    )
    expect(
      block.startsWith(
        [
          'Context from earlier harness sessions (their work is on the branches named below):',
          '',
          '## Session a1b2c3d4: COMPLETED (exit 0), branch harness/a1b2c3d4',
          'Task:',
          '  add the login endpoint',
          '  with tests',
          'Files changed (2):',
          '  src/login.ts',
          '  test/login.test.ts',
          'Diff stat against its base:',
          '   src/login.ts | 40 +++',
          '   1 file changed',
          'Checkpoints:',
          '  #0 run-end: end of run (checkpoint 0)',
          "The agent's final message:",
          '  Added POST /login.',
          '  All tests pass.',
          '',
          '## Session ffff0000: FAILED (exit 2)',
        ].join('\n'),
      ),
    ).toBe(true)
    expect(block.split('## Session')).toHaveLength(3)
    expect(block.endsWith('--- end of context; the task follows ---')).toBe(true)
    expect(promptWithContext(block, 'next')).toBe(`${block}\n\nnext`)
    expect(promptWithContext('', 'next')).toBe('next')
  })

  test('trimmed to the limit from the least important part: diff stat, then checkpoints, files, final message', () => {
    const files = Array.from({ length: 400 }, (_, i) => `src/file-${i}.ts`)
    const stat = files.map((f) => ` ${f} | 1 +`).join('\n')
    const big = source({ files, stat })
    const full = buildContextBlock([big], 1 << 20)
    for (const limit of [256, 1000, 4000, 12000]) {
      const block = buildContextBlock([big], limit)
      expect(Buffer.byteLength(block)).toBeLessThanOrEqual(limit)
    }
    // At 12 KB the stat goes first; the task, final message and checkpoints stay whole.
    const block = buildContextBlock([big], 12000)
    expect(Buffer.byteLength(full)).toBeGreaterThan(12000)
    expect(block).toMatch(
      /Diff stat against its base:\n( {3}src\/file-\d+\.ts \| 1 \+\n)+ {2}\[… \d+ more lines trimmed\]\nCheckpoints:/,
    )
    expect(block).toContain('  src/file-399.ts')
    expect(block).toContain('  All tests pass.')
    expect(block).toContain('  #0 run-end')
    // Tighter: the file list is cut too, the task and final message survive.
    const tight = buildContextBlock([big], 2000)
    expect(tight).toMatch(/Files changed \(400\):\n( {2}src\/file-\d+\.ts\n)*\s+\[… \d+ more lines trimmed\]/)
    expect(tight).toContain('  with tests')
    expect(tight).toContain('  All tests pass.')
    // A multi-byte task cut at the hard limit stays valid UTF-8.
    const tiny = buildContextBlock([source({ task: 'ü'.repeat(500) })], 300)
    expect(Buffer.byteLength(tiny)).toBeLessThanOrEqual(300)
    expect(tiny).not.toContain('\uFFFD')
  })
})

describe('task hash', () => {
  test('a different prompt differs; the same, none, or an unrecorded task does not', () => {
    const recorded = taskHash('fix the tests')
    expect(recorded).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(taskDiffers(recorded, 'fix the tests')).toBe(false)
    expect(taskDiffers(recorded, 'add a feature')).toBe(true)
    expect(taskDiffers(recorded, '')).toBe(false)
    expect(taskDiffers(null, 'add a feature')).toBe(false)
  })
})
