import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

// Set by jest.config.js: Nest 12 from node_modules, or Nest 11 from test/nest11 (npm run test:nest11).
const { ACKQ_NEST_MAJOR: major, ACKQ_NEST_DIR: folder } = globalThis as unknown as {
  ACKQ_NEST_MAJOR: number;
  ACKQ_NEST_DIR: string;
};

describe('the Nest this run proves', () => {
  it.each(['@nestjs/common', '@nestjs/core', '@nestjs/microservices', '@nestjs/platform-express'])(
    'is %s of the major the run is for',
    (name) => {
      // Real paths: node_modules may be a link (a worktree's to the main checkout's).
      expect(realpathSync(require.resolve(name)).startsWith(realpathSync(join(folder, name)))).toBe(true);
      const manifest = JSON.parse(readFileSync(join(folder, name, 'package.json'), 'utf8')) as {
        version: string;
        type?: string;
      };
      expect(manifest.version.split('.')[0]).toBe(String(major));
      // Nest 12 ships ES modules only; Nest 11 CommonJS.
      expect(manifest.type === 'module').toBe(major >= 12);
    },
  );
});
