import { execFileSync, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The image the container tests run in: this machine's node, git and shell (scripts/container-test-image.sh). */
export const TEST_IMAGE = process.env.HARNESS_TEST_IMAGE ?? 'localhost/harness-test:latest'

const BUILD_SCRIPT = fileURLToPath(new URL('../../scripts/container-test-image.sh', import.meta.url))

/**
 * The engine the container tests use: podman, if it runs a container here (the image is built from host
 * binaries when missing); null when no engine can run at all, and the tests then skip with one line saying so.
 */
export function usableEngine(): { engine: 'podman'; why?: undefined } | { engine: null; why: string } {
  const probe = spawnSync('podman', ['version', '--format', '{{.Client.Version}}'], { encoding: 'utf8' })
  if (probe.error || probe.status !== 0) return { engine: null, why: 'podman is not installed' }
  const exists = spawnSync('podman', ['image', 'exists', TEST_IMAGE])
  if (exists.status !== 0) {
    const built = spawnSync(BUILD_SCRIPT, ['podman', TEST_IMAGE], { encoding: 'utf8' })
    if (built.status !== 0) return { engine: null, why: `the test image could not be built: ${built.stderr}` }
  }
  const run = spawnSync('podman', ['run', '--rm', '--network=none', TEST_IMAGE, 'true'], { encoding: 'utf8' })
  if (run.status !== 0) {
    return { engine: null, why: `podman cannot run a container here: ${run.stderr.trim().split('\n').pop()}` }
  }
  return { engine: 'podman' }
}

/** Ids of the containers labelled as this session's, running or not. */
export function sessionContainers(id: string): string[] {
  const out = execFileSync('podman', ['ps', '--all', '--quiet', '--filter', `label=harness.session=${id}`], {
    encoding: 'utf8',
  })
  return out.split('\n').filter(Boolean)
}

export function containerRunning(id: string): boolean {
  const result = spawnSync(
    'podman',
    ['inspect', '--type', 'container', '--format', '{{.State.Running}}', id],
    {
      encoding: 'utf8',
    },
  )
  return result.status === 0 && result.stdout.trim() === 'true'
}
