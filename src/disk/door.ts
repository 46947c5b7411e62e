// The one door to the disk (SPEC §10, "By construction, not by call site"; docs/security.md): every file harness
// opens under `.harness/`, or at a path a record, manifest or config names, is opened through here. Nothing is
// followed through a symlink, what was opened is type-checked before a byte is read (a FIFO, socket, device or
// link is refused at once and never blocks), reads are bounded in size, temp files are created exclusively under
// random names, JSON is bounded in depth, and no error quotes bytes of a file. The door is the folder disk/:
// this module is its entry, the others its parts (node built-ins only, so the small entry can use them):
// open.ts opens, reads and writes files; paths.ts looks at paths and makes, lists and watches folders;
// held.ts removes files and folders (a folder emptied through the handle that holds it); pieces.ts writes,
// copies and hashes archive members in pieces; folder-reader.ts reads
// the files of one folder through one handle (a listing of records); agent-dir.ts reads folders an agent
// wrote (a private clone: its refs and objects); fd.ts writes to and looks at the process's own descriptors.
// What the door offers is below, named and grouped by what it does (in this order, not sorted).
// biome-ignore-all assist/source/organizeImports: the groups below say what each part of the door does

// Reading a file: never through a link, its kind checked before a byte is read, bounded in size and depth.
export {
  readBytes,
  readText,
  readJson,
  parseJson,
  openRead,
  readBytesAt,
  readLinkText,
  LIMITS,
  type FileKind,
  UnsafeFileError,
  JsonTextError,
} from './open.js'
export { FolderReader } from './folder-reader.js'
export { readAgentFile } from './agent-dir.js'
export { readStreamOf, hashFile } from './pieces.js'

// Writing a file: atomically or exclusively, under random temp names, never through a link.
export {
  writeFileAtomic,
  writeFileNew,
  createExclusive,
  appendText,
  writeAll,
  tempName,
  linkFile,
  renameFile,
  setFileMode,
  writeZerosFile,
  openLogForAppend,
} from './open.js'
export { createNewFile, syncAndClose, copyPlainFileNew } from './pieces.js'
export { copyPlainFile, copyFileNew } from './paths.js'
export { copyAgentFiles } from './agent-dir.js'

// Descriptors: a file held open, the process's own output.
export { closeFd, fdSize, readInto } from './open.js'
export { fdMayBeTerminal, releaseHungUpTerminals, writeToFd, writeTextToFd } from './fd.js'

// Looking at a path without following it.
export {
  pathExists,
  entryExists,
  realPath,
  realPathNative,
  lstatBig,
  lstatPath,
  statPath,
  type BigIntStats,
  type Dirent,
  type Stats,
} from './paths.js'
export { lstatOrNull, statOrNull } from './open.js'

// Folders: made, checked, listed, watched.
export { ensureDir, readDirNames } from './open.js'
export {
  assertUsableDir,
  readDirEntries,
  listDir,
  makeTempDir,
  makeDirs,
  setMode,
  chmodDir,
  isEmptyFolder,
  watchDir,
  type FSWatcher,
} from './paths.js'
export { makeStagingDir, filesUnder } from './pieces.js'

// Removing: a file or link as itself, a folder emptied through the handle that holds it.
export { unlinkFile, unlinkQuiet } from './open.js'
export { unlinkAsync, removeEmptyDir, removeEmptyDirAsync } from './paths.js'
export {
  unlinkIfThere,
  removeEmptyFolder,
  removeFolderTree,
  HeldDir,
  emptyDirHeld,
  removeHeldSync,
  removeFileBelow,
} from './held.js'
