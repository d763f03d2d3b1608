import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

describe('public types (test/types/*.ts, checked by tsc)', () => {
  it('compile, and every // @ts-expect-error line is still an error', () => {
    // tsc reports a @ts-expect-error that no longer meets an error ("Unused '@ts-expect-error'
    // directive"), so a type check that stops refusing bad code fails here.
    const tsc = require.resolve('typescript/bin/tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', 'test/types/tsconfig.json', '--listFiles'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const lines = run.stdout.split('\n').filter((line) => line.trim() !== '');
    const files = lines.filter((line) => line.startsWith('/'));
    const diagnostics = lines.filter((line) => !line.startsWith('/'));
    expect({ status: run.status, diagnostics, stderr: run.stderr }).toEqual({ status: 0, diagnostics: [], stderr: '' });
    // Not vacuous: the type tests were part of the program.
    expect(files).toContain(resolve(ROOT, 'test/types/typed-topics.ts'));
  });
});
