import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * What the package project's files share: npm and Node run in new apps under a temporary folder,
 * the tarball packed as `npm publish` would, and the check that no install met a peer conflict.
 */
export const root = join(__dirname, '../../..');

// Without what `npm test` sets for its script (npm_config_local_prefix would send the apps'
// installs to this repository) and test:nest11's preload; the user's npm settings stay.
const inherited = ([key]: [string, unknown]) =>
  !/^(npm_config_local_prefix|npm_lifecycle_|npm_package_|NODE_OPTIONS$)/i.test(key);
const env = Object.fromEntries(Object.entries(process.env).filter(inherited));

/** Runs a command in `cwd`; rejects, with its stdout and stderr, when it exits non-zero. */
export const exec = (command: string, args: string[], cwd: string, extra: Record<string, string> = {}) =>
  promisify(execFile)(command, args, { cwd, env: { ...env, ...extra }, timeout: 240_000, maxBuffer: 32 << 20 });

/** Why the registry cannot be reached (`npm ping`'s last line), or undefined when it can. */
function registryUnreachable(): string | undefined {
  try {
    execFileSync('npm', ['ping'], { env, stdio: 'pipe', timeout: 20_000 });
    return undefined;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error)
      .trim()
      .split('\n')
      .pop();
  }
}

const unreachable = registryUnreachable();
if (unreachable) console.warn(`test/package skipped: the npm registry is unreachable (${unreachable})`);
/** `describe`, or `describe.skip` (with the reason printed) when the registry is unreachable. */
export const describeOnline = unreachable ? describe.skip : describe;

/** Packs this repository into `dir` as `npm publish` would; returns the tarball's path. */
export async function packTarball(dir: string): Promise<string> {
  if (!existsSync(join(root, 'dist/index.js')))
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  const packed = JSON.parse((await exec('npm', ['pack', '--json', '--pack-destination', dir], root)).stdout) as {
    filename: string;
  }[];
  return join(dir, packed[0].filename);
}

/** What npm says when it met a peer conflict, even one it worked around. */
export const PEER_TROUBLE = /ERESOLVE|peer dep|conflicting peer|invalid/i;

/**
 * `npm install` in `dir` with npm's default settings (no --legacy-peer-deps, no overrides), the
 * cache first: apps of one run share it. Returns npm's output; rejects when npm does.
 */
export async function npmInstall(dir: string, specs: string[] = []): Promise<string> {
  const { stdout, stderr } = await exec(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', ...specs],
    dir,
  );
  return `${stdout}${stderr}`;
}

/** The version of a package installed in an app. */
export function installedVersion(dir: string, name: string): string {
  const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** Stdout and stderr of a rejected exec, for a readable failure. */
export function outputOf(error: unknown): string {
  const { stdout = '', stderr = '', message } = error as { stdout?: string; stderr?: string; message: string };
  return `${message}\n${stdout}${stderr}`;
}
