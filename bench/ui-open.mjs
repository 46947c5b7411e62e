// How long `harness ui` takes to open: from its start to the first full frame on a terminal, the list of
// sessions drawn (the title counting them, the rows, the footer's keys). The dashboard runs on a real
// pseudo-terminal (util-linux `script`, 120×40), and the time is read from that terminal's output as it comes:
// what a user sees, nothing reported by harness about itself. The same start on the same terminal with a command
// that prints the frame's marks at once (`printf`) is the floor: the terminal's own cost.
//
// `node bench/ui-open.mjs <count> -- <command...>` starts `<command...>` on the terminal in the current folder,
// waits for a full frame of <count> sessions and exits (hyperfine times it, bench/hyperfine.mjs).
import { spawn } from 'node:child_process'

const SIZE = 'stty cols 120 rows 40'

/** A word for `sh -c`. */
const quote = (word) => `'${word.replace(/'/g, `'\\''`)}'`

/** What a full frame of `count` sessions shows: its title's count and the footer's last key. */
export function fullFrame(count) {
  return (text) => text.includes(`· ${count} sessions`) && text.includes('q quit')
}

/**
 * Milliseconds from the start of `argv` on a 120×40 pseudo-terminal to the first output that `done` accepts;
 * then q is typed and the terminal's processes are waited for.
 */
export function openOnTerminal({ argv, cwd, env, done, timeoutMs = 60_000 }) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn('script', ['-qfec', `${SIZE} && exec ${argv.map(quote).join(' ')}`, '/dev/null'], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
      detached: true,
    })
    // The floor's terminal may be gone before q is typed.
    child.stdin.on('error', () => {})
    let text = ''
    let ms
    const timer = setTimeout(() => {
      process.kill(-child.pid, 'SIGKILL')
      reject(new Error(`no full frame in ${timeoutMs} ms; the terminal showed:\n${text.slice(-2000)}`))
    }, timeoutMs)
    child.stdout.on('data', (chunk) => {
      if (ms !== undefined) return
      text += chunk.toString('utf8')
      if (!done(text)) return
      ms = performance.now() - started
      clearTimeout(timer)
      // q, typed on the terminal: the dashboard ends, and the terminal with it.
      child.stdin.write('q')
    })
    child.on('error', reject)
    child.on('close', () =>
      ms === undefined ? reject(new Error(`ended before a full frame:\n${text}`)) : resolve(ms),
    )
  })
}

/** The floor: the same terminal, a command that prints the marks at once. */
export function floorArgv(count) {
  return ['printf', `harness ui: bench · ${count} sessions … q quit\\n`]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.argv[2])
  const at = process.argv.indexOf('--')
  const argv = process.argv.slice(at + 1)
  if (!count || at < 0 || argv.length === 0) {
    console.error('usage: node bench/ui-open.mjs <count> -- <command...>')
    process.exit(2)
  }
  await openOnTerminal({ argv, cwd: process.cwd(), env: process.env, done: fullFrame(count) })
}
