// The types of isolated-env.mjs, for the tests that build on it (test/helpers/tmp.ts).
export function isolatedEnvAt(home: string, name: string, keep?: string[]): NodeJS.ProcessEnv
