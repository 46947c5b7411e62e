import { ExternalToolError } from '../errors.js'
import { Git } from './git.js'

const VERSION_TIMEOUT_MS = 5000

/** The installed git's version (`2.43.0`), or null when git is missing, cannot run or does not answer. */
export async function gitVersion(cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  try {
    const result = await new Git(cwd, env).try(['--version'], {
      signal: AbortSignal.timeout(VERSION_TIMEOUT_MS),
    })
    if (result.exitCode !== 0) return null
    return (
      result.stdout
        .trim()
        .split('\n')[0]
        ?.trim()
        .replace(/^git version /, '') ?? ''
    )
  } catch (error) {
    if (error instanceof ExternalToolError || (error as Error).name === 'AbortError') return null
    throw error
  }
}
