import { existsSync } from 'node:fs';

/**
 * Debian's Chromium, which the browser tests drive with playwright-core (no browser download):
 * CHROMIUM_PATH, else the first of the usual paths that exists; undefined when none is installed.
 */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((path): path is string => !!path && existsSync(path));
}

/** Flags for a headless run in a container: no sandbox (root), no GPU, nothing fetched from outside. */
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
];
