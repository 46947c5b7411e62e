import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { slurmExec, slurmText } from '../../../../../src/sessions/backends/slurm/tools.js'
import { tmpDir } from '../../../../helpers/tmp.js'

/** A PATH holding only these fake Slurm commands (shell scripts) and the shell's own tools. */
function fakeSlurm(commands: Record<string, string>): NodeJS.ProcessEnv {
  const bin = tmpDir()
  for (const [name, body] of Object.entries(commands)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`)
    chmodSync(join(bin, name), 0o755)
  }
  return { PATH: `${bin}:/usr/bin:/bin`, TZ: 'Europe/Paris', SLURM_TIME_FORMAT: 'relative' }
}

test('no sbatch on PATH: exit 5, SLURM_MISSING, naming it', { tags: ['process'] }, async () => {
  const exec = slurmExec({ PATH: tmpDir() })
  await expect(exec('sbatch', ['--parsable'])).rejects.toMatchObject({
    exitCode: 5,
    code: 'SLURM_MISSING',
    message: "sbatch not found on PATH: the Slurm backend needs Slurm's client commands",
  })
})

test('a command past its deadline is killed: exit 5, SLURM_TIMEOUT', { tags: ['process'] }, async () => {
  const exec = slurmExec(fakeSlurm({ squeue: 'exec sleep 30' }))
  await expect(exec('squeue', [], { timeoutMs: 200 })).rejects.toMatchObject({
    exitCode: 5,
    code: 'SLURM_TIMEOUT',
  })
})

test('an unreachable controller: exit 5, SLURM_UNREACHABLE, with what Slurm said', {
  tags: ['process'],
}, async () => {
  const exec = slurmExec(
    fakeSlurm({
      scontrol:
        'echo "scontrol: error: Unable to contact slurm controller (connect failure)" >&2; echo "slurm_load_partitions: Unable to contact slurm controller (connect failure)" >&2; exit 1',
    }),
  )
  await expect(slurmText(exec, 'scontrol', ['ping'], 'ping')).rejects.toMatchObject({
    exitCode: 5,
    code: 'SLURM_UNREACHABLE',
    message:
      'scontrol cannot reach the Slurm controller: slurm_load_partitions: Unable to contact slurm controller (connect failure)',
  })
})

test('arguments go as an argv (no shell), and times are asked in UTC in the standard format', {
  tags: ['process'],
}, async () => {
  const exec = slurmExec(fakeSlurm({ squeue: 'printf "%s|" "$@"; echo "$TZ $SLURM_TIME_FORMAT"' }))
  const result = await exec('squeue', ['--jobs=1', '$(touch /x) `y`', 'a b'])
  expect(result.stdout).toBe('--jobs=1|$(touch /x) `y`|a b|UTC standard\n')
  expect(result.exitCode).toBe(0)
})

test('any other exit is returned for the caller to judge', { tags: ['process'] }, async () => {
  const exec = slurmExec(fakeSlurm({ scancel: 'echo "scancel: error: Kill job error" >&2; exit 1' }))
  expect(await exec('scancel', ['--', '5'])).toEqual({
    stdout: '',
    stderr: 'scancel: error: Kill job error\n',
    exitCode: 1,
  })
})
