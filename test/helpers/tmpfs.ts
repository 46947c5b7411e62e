import { execFileSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { tmpDir } from './tmp.js'

/**
 * Real small file systems for disk-fault tests (SPEC §10, "Disk faults"): a tmpfs the test mounts. Mounting
 * needs root, as in CI; a describe that uses these is skipped elsewhere, visibly (`describe.skipIf(!canMount)`).
 */
export const canMount = process.getuid?.() === 0

const mounts: string[] = []

/** Unmounts every tmpfs this file mounted; call once at the top of a test file that mounts. */
export function unmountAfterAll(): void {
  afterAll(() => {
    for (const mnt of mounts.splice(0)) {
      try {
        execFileSync('umount', [mnt])
      } catch {
        execFileSync('umount', ['-l', mnt])
      }
    }
  })
}

/** Mounts a tmpfs of `size` (mount's syntax: `128k`, `4m`) at a new folder; returns it and the folder above. */
export function mountTmpfs(size: string): { mnt: string; base: string } {
  const base = tmpDir()
  const mnt = join(base, 'mnt')
  mkdirSync(mnt)
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', mnt])
  mounts.push(mnt)
  return { mnt, base }
}

/** Writes a file until the file system says it is full. */
export function fillDisk(mnt: string): void {
  const fd = openSync(join(mnt, 'filler'), 'w')
  try {
    for (;;) writeSync(fd, Buffer.alloc(1024))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
}
