import { dirname } from 'node:path'
import type { RecordStore } from '../ports.js'
import type { IdentityCheckOf } from '../record/liveness.js'
import type { ReadEnv } from './backend.js'

/** What a reading command lends the backends: the store's environment, the port's process table and time. */
export function readEnvOf(store: RecordStore, check: IdentityCheckOf, now: Date): ReadEnv {
  return {
    env: store.env,
    harnessDir: dirname(store.dir),
    check,
    now,
    warnOnce: (key, message) => store.warnOnce(key, message),
  }
}
