/**
 * What a run of the command line works against: the process's own streams, directory and environment when
 * harness runs as a program (main.ts), or a caller's (the tests run most commands in process this way). Nothing
 * else under cli/ and commands/ reads `process.stdin`, `process.stdout`, `process.cwd()` or `process.env`, but
 * the small entry (cli/fast-entry.ts), which bin/harness runs as the process itself before the bundle.
 */
export interface CliIo {
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean }
  readonly stdout: NodeJS.WriteStream
  readonly stderr: NodeJS.WriteStream
}

export function processIo(): CliIo {
  return {
    cwd: process.cwd(),
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
  }
}
