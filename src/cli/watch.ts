import type { OutStream } from './fd-writer.js'

/**
 * A full-screen view that redraws in place when its content changes (`session list --watch`): the alternate
 * screen keeps the user's scrollback as it was, each frame overwrites the last line by line (no clear, so no
 * flicker), and Ctrl-C, SIGTERM or a hang-up leave the terminal as they found it.
 */
export async function watchScreen(
  draw: () => Promise<string>,
  stdout: OutStream,
  intervalMs = 500,
): Promise<void> {
  const write = (text: string) => {
    try {
      stdout.write(text)
    } catch {}
  }
  let stopped = false
  let wake: (() => void) | undefined
  let last: string | undefined
  const stop = () => {
    stopped = true
    wake?.()
  }
  const redraw = () => {
    last = undefined
    wake?.()
  }
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
  for (const signal of signals) process.on(signal, stop)
  stdout.on('resize', redraw)
  write('\x1b[?1049h\x1b[?25l')
  try {
    while (!stopped) {
      const text = await draw()
      if (text !== last && !stopped) {
        write(frame(text))
        last = text
      }
      await new Promise<void>((resolve) => {
        wake = resolve
        setTimeout(resolve, intervalMs)
      })
    }
  } finally {
    for (const signal of signals) process.removeListener(signal, stop)
    stdout.off('resize', redraw)
    write('\x1b[?25h\x1b[?1049l')
  }
}

/** Home, every line followed by erase-to-end-of-line, then erase below: an in-place redraw. */
export function frame(text: string): string {
  return `\x1b[H${text
    .split('\n')
    .map((line) => `${line}\x1b[K`)
    .join('\r\n')}\x1b[J`
}
