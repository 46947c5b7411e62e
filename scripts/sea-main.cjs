'use strict'
// The main script of the single executable (scripts/build-sea.mjs bundles it with dist/fast.cjs): the same
// split as bin/harness. The small entry answers the plain `session path <id>` and the top-level help; anything
// else runs the bundle, carried as an asset with its V8 code cache beside it (docs/performance.md,
// "Start-up"), so that a start that needs neither pays for neither.
const { answer } = require('../dist/fast.cjs')

const code = process.env.HARNESS_NO_FAST_PATH === '1' ? null : answer(process.argv.slice(2))
if (code !== null) process.exitCode = code
else runBundle()

function runBundle() {
  const { getAsset, getRawAsset } = require('node:sea')
  const { Script } = require('node:vm')
  const Module = require('node:module')
  const { dirname } = require('node:path')
  // The binary stands for the bundle's file: stack traces name it, and built-ins are all it requires.
  const file = process.execPath
  let cachedData
  try {
    cachedData = Buffer.from(getRawAsset('harness.cjs.cache'))
  } catch {}
  const script = new Script(Module.wrap(getAsset('harness.cjs', 'utf8')), { filename: file, cachedData })
  const bundle = new Module(file)
  bundle.filename = file
  script
    .runInThisContext()
    .call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, dirname(file))
}
