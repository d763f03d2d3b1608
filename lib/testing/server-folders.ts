import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sendCommand } from './redis-probe';

/**
 * The folders of test servers, one per server under one parent per user, each with an owner
 * marker: the test process that started it and the server's port. A process killed with SIGKILL
 * cannot stop its server, so the next `startTestRedis` anywhere on the machine shuts down the
 * servers whose owner is gone and removes their folders.
 */
const PARENT = join(tmpdir(), `ackq-test-redis-${process.getuid?.() ?? 'user'}`);
const MARKER = 'owner.json';
const SHUTDOWN_WAIT_MS = 10_000;

interface OwnerMarker {
  owner: number;
  port: number;
}

/** A new folder for a server on `port`, marked as this process's; its real path, as the server reports it. */
export function makeServerFolder(port: number): string {
  mkdirSync(PARENT, { recursive: true, mode: 0o700 });
  const dir = realpathSync(mkdtempSync(join(PARENT, 'server-')));
  const marker: OwnerMarker = { owner: process.pid, port };
  writeFileSync(join(dir, MARKER), JSON.stringify(marker));
  return dir;
}

/** Shuts down the servers (and removes the folders) of test processes that ended without stopping them. */
export async function reapOrphanedServers(): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(PARENT);
  } catch {
    return; // no parent folder yet: nothing was ever started here
  }
  await Promise.all(names.map((name) => reap(realpathSync(join(PARENT, name)))));
}

async function reap(dir: string): Promise<void> {
  const marker = readMarker(dir);
  // No marker: a folder another process is making right now, or not ours.
  if (!marker || isAlive(marker.owner)) return;
  const answer = await sendCommand(marker.port, 'CONFIG GET dir', 1_000, 5);
  if (answer?.endsWith(`\n${dir}`)) {
    // Our server, by its folder (not merely its port, which another server may have taken since).
    await sendCommand(marker.port, 'SHUTDOWN NOSAVE');
    const deadline = Date.now() + SHUTDOWN_WAIT_MS;
    while ((await sendCommand(marker.port, 'PING')) !== undefined && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
  } else if (answer?.startsWith('-')) {
    return; // a server that refuses the question (a password among its args): left as it is
  }
  rmSync(dir, { recursive: true, force: true });
}

function readMarker(dir: string): OwnerMarker | undefined {
  try {
    const marker = JSON.parse(readFileSync(join(dir, MARKER), 'utf8')) as Partial<OwnerMarker>;
    return Number.isInteger(marker.owner) && Number.isInteger(marker.port) ? (marker as OwnerMarker) : undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 tests for the process without touching it: ESRCH means it is gone. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
