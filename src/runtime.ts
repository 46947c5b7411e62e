/**
 * What differs between the two runtimes harness runs on (docs/development/native.md, "What differs between the runtimes"):
 * node (bin/harness.cjs and the bundle) and bun (the native executable). Every difference the code acts on is
 * here, behind one answer for both; no other module asks which runtime it runs on.
 */

/** bun's own APIs, as far as they are used here; undefined under node. */
interface BunApi {
  CryptoHasher: new (algorithm: HashAlgorithm, key?: Uint8Array) => Hasher
  spawn(command: string[], options: BunSpawnOptions): BunSubprocess
}
interface BunSpawnOptions {
  cwd: string
  env: Record<string, string>
  stdin: 'pipe' | 'ignore'
  stdout: 'pipe'
  stderr: 'pipe'
}
interface BunSubprocess {
  readonly stdin: { write(text: string): unknown; end(): unknown } | undefined
  readonly stdout: ReadableStream<Uint8Array>
  readonly stderr: ReadableStream<Uint8Array>
  readonly exited: Promise<number>
  readonly exitCode: number | null
  kill(signal?: NodeJS.Signals): void
}
const Bun = (globalThis as { Bun?: BunApi }).Bun

export type HashAlgorithm = 'sha256' | 'sha1'

export interface Hasher {
  update(data: string | Uint8Array): Hasher
  digest(): Buffer
  digest(encoding: 'hex'): string
}

/**
 * A running hash of `algorithm`, or with `hmacKey` an HMAC. In the native executable bun's own: loading
 * node:crypto costs it about 3.5 ms at start, and its HMAC 4× as much per record (docs/development/native.md, "Start-up").
 * Under node, node:crypto, loaded on first use.
 */
export function newHasher(algorithm: HashAlgorithm, hmacKey?: Uint8Array): Hasher {
  if (Bun) return new Bun.CryptoHasher(algorithm, hmacKey)
  const crypto = process.getBuiltinModule('node:crypto')
  return hmacKey ? crypto.createHmac(algorithm, hmacKey) : crypto.createHash(algorithm)
}

/** How a program that ran to its end ended, with what it printed. */
export interface Captured {
  stdout: string
  stderr: string
  /** 1 for a signal, as node's execFile reports one. */
  exitCode: number
  /** Why it failed, when it did: its exit, a signal, or too much output. */
  error?: Error
}

export interface CaptureOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  /** Written to its stdin. */
  input?: string | undefined
  signal?: AbortSignal | undefined
  /** The most output it may give: past it, it is stopped and the call failed. */
  maxOutput: number
  /** How long it may run: past it, it is killed (SIGKILL), its pipes closed, and the answer is 'timeout'. */
  deadlineMs?: number | undefined
}

/**
 * Runs `argv` to its end (or its deadline: 'timeout'), its output captured as text, as node's execFile does: a
 * missing program rejects with the ENOENT error, an aborted call with an AbortError (the program killed). In
 * the native executable bun's own spawn: node's child_process there is an emulation that cost about 10 ms of
 * JavaScript per process, and a run starts six git processes (docs/development/native.md, "Start-up").
 */
export function runCaptured(argv: string[], options: CaptureOptions): Promise<Captured | 'timeout'> {
  if (Bun) return runInBun(Bun, argv, options)
  const [file = '', ...args] = argv
  const { cwd, env, signal, maxOutput, input, deadlineMs } = options
  // Loaded on first use, as node:crypto is: a command that runs no program pays nothing for it.
  const { execFile } = process.getBuiltinModule('node:child_process')
  return new Promise((resolve, reject) => {
    let timedOut = false
    const child = execFile(
      file,
      args,
      { cwd, env, maxBuffer: maxOutput, encoding: 'utf8', signal, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        clearTimeout(timer)
        if (timedOut) {
          resolve('timeout')
          return
        }
        const code = (error as NodeJS.ErrnoException | null)?.code
        if (code === 'ENOENT' || code === 'ABORT_ERR') {
          reject(error)
          return
        }
        const exitCode = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve(error ? { stdout, stderr, exitCode, error } : { stdout, stderr, exitCode })
      },
    )
    // Past the deadline it is killed, and its pipes closed: a child it left (a filter) may hold them open.
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true
            child.kill('SIGKILL')
            child.stdout?.destroy()
            child.stderr?.destroy()
          }, deadlineMs)
    if (input !== undefined) {
      child.stdin?.on('error', () => {}) // it exited without reading it: its exit code says why
      child.stdin?.end(input)
    }
  })
}

async function runInBun(bun: BunApi, argv: string[], options: CaptureOptions): Promise<Captured | 'timeout'> {
  const { signal, input, maxOutput, deadlineMs } = options
  if (signal?.aborted) throw abortError()
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(options.env)) if (value !== undefined) env[key] = value
  const child = bun.spawn(argv, {
    cwd: options.cwd,
    env,
    stdin: input === undefined ? 'ignore' : 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const readers = [child.stdout.getReader(), child.stderr.getReader()]
  // An abort, or the deadline, kills it and stops reading its pipes (a child it left may hold them open).
  const stop = () => {
    child.kill('SIGKILL')
    for (const reader of readers) reader.cancel().catch(() => {})
  }
  let timedOut = false
  const timer =
    deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true
          stop()
        }, deadlineMs)
  signal?.addEventListener('abort', stop, { once: true })
  let overflow = false
  const collect = async (reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> => {
    const chunks: Uint8Array[] = []
    let size = 0
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }))
      if (done || !value) break
      size += value.length
      if (size > maxOutput) {
        overflow = true
        child.kill('SIGTERM')
        break
      }
      chunks.push(value)
    }
    return Buffer.concat(chunks).toString('utf8')
  }
  try {
    if (input !== undefined) {
      try {
        child.stdin?.write(input)
        child.stdin?.end()
      } catch {} // it exited without reading it: its exit code says why
    }
    const [stdout, stderr] = await Promise.all([
      collect(readers[0] as ReadableStreamDefaultReader<Uint8Array>),
      collect(readers[1] as ReadableStreamDefaultReader<Uint8Array>),
      child.exited,
    ])
    if (signal?.aborted) throw abortError()
    if (timedOut) return 'timeout'
    const exitCode = overflow ? 1 : (child.exitCode ?? 1)
    if (exitCode === 0) return { stdout, stderr, exitCode }
    const reason = overflow ? `output over ${maxOutput} bytes` : stderr
    return { stdout, stderr, exitCode, error: new Error(`Command failed: ${argv.join(' ')}\n${reason}`) }
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', stop)
  }
}

/** An abort as node's child_process reports one. */
function abortError(): Error {
  return Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' })
}

/**
 * The argv that runs this harness again with `args`: under node, node and the entry script (bin/harness.cjs);
 * in the native executable, the executable alone (bun gives it an argv[1] under /$bunfs/, the script it
 * carries inside, not a file to run).
 */
export function selfCommand(args: string[]): string[] {
  const entry = process.argv[1]
  return entry && !(Bun && /^(\/\$bunfs\/|[A-Z]:[\\/]~BUN[\\/])/.test(entry))
    ? [process.execPath, entry, ...args]
    : [process.execPath, ...args]
}
