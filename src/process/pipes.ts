import type { Readable } from 'node:stream'

interface PipedChild {
  once(event: 'exit', listener: () => void): unknown
  stdout?: Readable | null
  stderr?: Readable | null
}

const QUIET_MS = 100
const MAX_DRAIN_MS = 2000

/**
 * A process it left behind (`sleep 60 &`) inherits the child's output pipes and holds them open after the child
 * exits, and waiting for end-of-file would wait for it. So once the child has exited: read what it wrote (it is
 * already in the pipe), then let go after `QUIET_MS` without data (at most `MAX_DRAIN_MS`). The leftover then
 * writes into a closed pipe; the child's own result is final.
 */
export function releasePipesAfterExit(child: PipedChild): void {
  child.once('exit', () => {
    const streams = [child.stdout, child.stderr].filter(
      (stream): stream is Readable => !!stream && !stream.destroyed && !stream.readableEnded,
    )
    if (streams.length === 0) return
    let quiet: NodeJS.Timeout | undefined
    const release = () => {
      clearTimeout(quiet)
      clearTimeout(limit)
      for (const stream of streams) {
        stream.off('data', wait)
        stream.destroy()
      }
    }
    const wait = () => {
      clearTimeout(quiet)
      quiet = setTimeout(release, QUIET_MS)
      quiet.unref()
    }
    const limit = setTimeout(release, MAX_DRAIN_MS)
    limit.unref()
    for (const stream of streams) {
      stream.on('data', wait)
      // Ended on its own: nothing to release, and no timer may keep harness waiting.
      stream.once('close', () => {
        if (streams.every((s) => s.destroyed || s.readableEnded)) {
          clearTimeout(quiet)
          clearTimeout(limit)
        }
      })
    }
    wait()
  })
}
