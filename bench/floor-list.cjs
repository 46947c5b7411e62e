// The floor for `harness session list --json`: the least any tool must do to print every record as one JSON
// document: read the folder, read and parse each file, print the array. CommonJS, like the CLI's bundle.
const { readdirSync, readFileSync } = require('node:fs')
const { join } = require('node:path')

const dir = process.argv[2]
const records = []
for (const name of readdirSync(dir)) {
  if (name.endsWith('.json')) records.push(JSON.parse(readFileSync(join(dir, name), 'utf8')))
}
process.stdout.write(`${JSON.stringify(records, null, 2)}\n`)
