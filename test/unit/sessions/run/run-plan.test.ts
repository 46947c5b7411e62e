import { describe, expect, it } from 'vitest'
import { parseRunPlan } from '../../../../src/sessions/run/run-plan.js'

/** A plan as the launcher hands it to a detached or tmux supervisor (src/sessions/run/run-plan.ts). */
const PLAN = {
  sessionsDir: '/p/.harness/sessions',
  logsDir: '/p/.harness/logs',
  id: 'a1b2c3d4',
  runN: 1,
  kind: 'start',
  command: 'claude',
  args: ['-p', 'task'],
  cwd: '/p/.harness/worktrees/a1b2c3d4',
  env: { PATH: '/usr/bin', HARNESS_SESSION_ID: 'a1b2c3d4' },
  mode: 'background',
  backend: 'local',
  timeoutMs: null,
}

describe('the run plan that crosses into a supervisor is parsed, never cast', () => {
  it('takes a plan as JSON text or as a value', () => {
    expect(parseRunPlan(JSON.stringify(PLAN))).toEqual(PLAN)
    expect(parseRunPlan(PLAN)).toEqual(PLAN)
  })

  it.each([
    ['not JSON', '{"id":', /is not JSON/],
    ['an unknown key', { ...PLAN, shell: 'rm -rf /' }, /invalid/],
    ['a relative folder', { ...PLAN, cwd: 'worktrees/x' }, /cwd/],
    ['an id that is a path', { ...PLAN, id: '../../etc' }, /id/],
    ['an argument that is not a string', { ...PLAN, args: ['-p', 3] }, /args/],
    ['a value of the environment that is not a string', { ...PLAN, env: { A: 1 } }, /env/],
    ['a backend nobody knows', { ...PLAN, backend: 'kubernetes' }, /backend/],
    ['a run number of 0', { ...PLAN, runN: 0 }, /runN/],
    ['a negative timeout', { ...PLAN, timeoutMs: -5 }, /timeoutMs/],
    ['no command', { ...PLAN, command: '' }, /command/],
  ])('refuses %s with PLAN_INVALID', (_what, input, message) => {
    let caught: unknown
    try {
      parseRunPlan(input)
    } catch (error) {
      caught = error
    }
    expect(caught).toMatchObject({ code: 'PLAN_INVALID', message: expect.stringMatching(message) })
  })
})
