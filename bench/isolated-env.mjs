// The environment that keeps git and harness away from the user's own configuration: one copy for the tests
// (test/helpers/tmp.ts builds on it) and the bench, which is plain node and cannot import TypeScript.
import { join } from 'node:path'

/**
 * `process.env` without HARNESS_* and GIT_* (but the HARNESS_* names in `keep`), with `home` as HOME and the
 * XDG folders under it (the state folder holds the key that seals records and the trusted configs), no global
 * or system git config, and `name` (lower-cased at example.com) as author and committer.
 * @param {string} home
 * @param {string} name
 * @param {string[]} [keep]
 * @returns {Record<string, string | undefined>}
 */
export function isolatedEnvAt(home, name, keep = []) {
  const env = { ...process.env }
  for (const key of Object.keys(env)) {
    if ((key.startsWith('HARNESS_') && !keep.includes(key)) || key.startsWith('GIT_')) delete env[key]
  }
  const email = `${name.toLowerCase()}@example.com`
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
    NO_COLOR: '1',
  }
}
