import { expect } from 'vitest'
import { ExitCode, HarnessError } from '../../src/errors.js'

/** What `promise` rejects with; an error if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (caught: unknown) => caught,
  )
}

/** The HarnessError `promise` rejects with; an error if it resolves or rejects with anything else. */
export async function harnessRejection(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await rejection(promise)
  if (!(error instanceof HarnessError)) throw new Error(`expected a HarnessError, got ${String(error)}`)
  return error
}

/** The error of class `kind` that `fn` throws, checked to carry the usage exit code; an error if it returns. */
export function usageThrow<E extends HarnessError>(kind: new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(kind)
    expect((error as E).exitCode).toBe(ExitCode.Usage)
    return error as E
  }
  throw new Error(`expected a ${kind.name}`)
}
