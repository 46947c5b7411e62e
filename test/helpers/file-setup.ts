import { afterAll } from 'vitest'
import { removeTmpDirs } from './tmp.js'

// Runs in every test file, also where test files share their modules (the unit project runs without isolation).
afterAll(removeTmpDirs)
