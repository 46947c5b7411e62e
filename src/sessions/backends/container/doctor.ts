import type { DoctorLine, DoctorRequest } from '../backend.js'
import { checkEngine } from './backend.js'

/**
 * `doctor`'s line for the container engine (docs/backends.md): its name and version, and whether a test
 * container of `container.image` starts. Missing is a failure only where config sends sessions into containers.
 */
export async function containerDoctor({ config, env, chosen }: DoctorRequest): Promise<DoctorLine[]> {
  const name = 'container engine'
  const image = config.container?.image
  try {
    const found = await checkEngine(config.container?.engine, image, env)
    const version = found.version ? ` ${found.version}` : ' (version unknown)'
    if (found.test === 'skipped') {
      return [
        {
          name,
          status: chosen ? 'warn' : 'ok',
          detail: `${found.engine}${version}; no container.image set, so no test container was started`,
          hint: 'harness config set container.image IMAGE --user',
        },
      ]
    }
    if (found.test === 'ok') {
      return [
        { name, status: 'ok', detail: `${found.engine}${version}; a test container of ${image} started` },
      ]
    }
    return [
      {
        name,
        status: chosen ? 'fail' : 'warn',
        detail: `${found.engine}${version}; a test container of ${image} ${found.test}`,
        hint: `try "${found.engine} run --rm ${image} true"`,
      },
    ]
  } catch (error) {
    return [
      {
        name,
        status: chosen ? 'fail' : 'info',
        detail: `${error instanceof Error ? error.message : String(error)}${chosen ? '' : ' (needed only for --backend container)'}`,
      },
    ]
  }
}
