import type { BackendName, ContainerChoice, SessionBackend } from './backend.js'

/** The backend of a name: each is loaded only when a session uses it. */
export async function backendFor(name: BackendName, options: ContainerChoice = {}): Promise<SessionBackend> {
  if (name === 'container') {
    const { containerBackend } = await import('./container/index.js')
    return containerBackend(options)
  }
  const { localBackend } = await import('./local.js')
  return localBackend
}
