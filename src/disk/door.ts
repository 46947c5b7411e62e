// The one door to the disk (SPEC §10, "By construction, not by call site"; docs/security.md): every file harness
// opens under `.harness/`, or at a path a record, manifest or config names, is opened through here. Nothing is
// followed through a symlink, what was opened is type-checked before a byte is read (a FIFO, socket, device or
// link is refused at once and never blocks), reads are bounded in size, temp files are created exclusively under
// random names, JSON is bounded in depth, and no error quotes bytes of a file. The door is the folder disk/:
// this module is its entry, the others its parts (node built-ins only, so the small entry can use them):
// open.ts opens, reads and writes files; paths.ts looks at paths and makes, lists and watches folders;
// held.ts removes a folder it holds open; pieces.ts writes, copies and hashes archive members in pieces;
// steps.ts holds the run workspace's, the removal engine's and the agent log's calls; folder-reader.ts reads
// the files of one folder through one handle (a listing of records); agent-dir.ts reads folders an agent
// wrote (a private clone: its refs and objects); fd.ts writes to and looks at the process's own descriptors.

export * from './agent-dir.js'
export * from './fd.js'
export * from './folder-reader.js'
export * from './held.js'
export * from './open.js'
export * from './paths.js'
export * from './pieces.js'
export * from './steps.js'
