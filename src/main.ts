import { runCli } from './app/entry.js'
import { processIo, releaseGoneTerminal } from './cli/io.js'

/** The entry point, and the only place that sets process.exitCode (or re-raises a signal). */
void runCli(process.argv.slice(2), processIo()).then(({ code, signal }) => {
  process.exitCode = code
  releaseGoneTerminal()
  if (signal) {
    // The agent died from SIGINT/SIGQUIT: die the same way so a calling shell loop stops too.
    process.removeAllListeners(signal)
    process.kill(process.pid, signal)
  }
})
