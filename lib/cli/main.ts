#!/usr/bin/env node
// The `redis-ack-queue` command (package.json "bin"): see the README's "Command line" section.
import { runCli } from './program';

void runCli(process.argv).then((exitCode) => {
  process.exitCode = exitCode;
  // Ends the process even if a socket or timer of a failed connection lingers.
  setTimeout(() => process.exit(exitCode), 500).unref();
});
