/**
 * Kills the test servers a process leaves running: on its exit (synchronously, the only way an
 * `exit` listener can), and on SIGINT, SIGTERM or SIGHUP, after which the signal is raised again
 * so the process ends as it would have. Listening only while a server runs, so an app's own
 * signal handling is untouched otherwise. A SIGKILL of the test process cannot be caught: its
 * servers stay up until the next start reaps them (server-folders.ts).
 */
const running = new Map<object, () => void>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onExit(): void {
  for (const kill of [...running.values()]) kill();
}

function onSignal(signal: NodeJS.Signals): void {
  onExit();
  unlisten();
  // Another listener decides what the signal does; without one, Node's default ends the process.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function listen(): void {
  process.on('exit', onExit);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function unlisten(): void {
  process.off('exit', onExit);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

/** Runs `kill` (synchronous) if the process ends before `forget(owner)`. */
export function killOnExit(owner: object, kill: () => void): void {
  if (running.size === 0) listen();
  running.set(owner, kill);
}

/** Stops watching `owner`: it was stopped. */
export function forget(owner: object): void {
  if (running.delete(owner) && running.size === 0) unlisten();
}
