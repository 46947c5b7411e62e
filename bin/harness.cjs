#!/usr/bin/env node
'use strict'
// The node runtime of harness: bin/harness runs it where there is no native executable, or with
// HARNESS_RUNTIME=node (docs/development/native.md). First the small entry (dist/fast.cjs,
// src/cli/fast-entry.ts): it answers the plain `session path <id>` and the top-level help exactly as the
// bundle would, without reading the bundle (docs/development/native.md, "Start-up"), and leaves everything
// else to it. HARNESS_NO_FAST_PATH=1 skips it (tests compare both; the build warms the code cache through
// the bundle).
const { env } = process
if (env.HARNESS_NO_FAST_PATH === '1' || env.HARNESS_WRITE_CODE_CACHE === '1') runBundle()
else {
  require('../dist/fast.cjs')
    .answer(process.argv.slice(2))
    .then((code) => {
      if (code !== null) process.exitCode = code
      else runBundle()
    })
}

// Runs the bundle through V8's code cache (made by `npm run build`): compiling the whole bundle on every start
// would cost more than everything `harness session path` does. A missing or rejected cache only costs time.
function runBundle() {
  const { readFileSync, writeFileSync, renameSync } = require('node:fs')
  const { join, dirname } = require('node:path')
  const { Script } = require('node:vm')
  const Module = require('node:module')

  const file = join(__dirname, '..', 'dist', 'harness.cjs')
  const cacheFile = `${file}.cache`
  let cachedData
  try {
    cachedData = readFileSync(cacheFile)
  } catch {}
  const script = new Script(Module.wrap(readFileSync(file, 'utf8')), {
    filename: file,
    cachedData,
  })
  const bundle = new Module(file, module)
  bundle.filename = file
  bundle.paths = Module._nodeModulePaths(dirname(file))
  if (env.HARNESS_WRITE_CODE_CACHE === '1') {
    // Build time: save what this run compiled, so the next start deserialises instead of parsing.
    process.on('exit', () => {
      writeFileSync(`${cacheFile}.tmp`, script.createCachedData())
      renameSync(`${cacheFile}.tmp`, cacheFile)
    })
  }
  script
    .runInThisContext()
    .call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, dirname(file))
}
