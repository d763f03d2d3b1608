import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Set by jest.config.js: ioredis 6 from node_modules, or ioredis 5 from test/ioredis5 (npm run test:ioredis5).
const { ACKQ_IOREDIS_MAJOR: major, ACKQ_IOREDIS_DIR: folder } = globalThis as unknown as {
  ACKQ_IOREDIS_MAJOR: number;
  ACKQ_IOREDIS_DIR: string;
};

describe('the ioredis this run proves', () => {
  it('is loaded from the folder, and of the major, the run is for', () => {
    // Real paths: a worktree's node_modules may be a link to another checkout's.
    const entry = realpathSync(require.resolve('ioredis'));
    expect(entry.startsWith(realpathSync(join(folder, 'ioredis')))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dirname(entry), '../package.json'), 'utf8')) as { version: string };
    expect(manifest.version.split('.')[0]).toBe(String(major));
  });
});
