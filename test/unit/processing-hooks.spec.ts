import { BaseRpcContext } from '@nestjs/microservices';
import { withProcessingHooks } from '../../lib/microservices/processing-hooks';

const id = Symbol('transport');
const context = new BaseRpcContext([]);

describe('withProcessingHooks', () => {
  it("settles with the work's outcome under Nest's default hook, the end hook once after it", async () => {
    const calls: string[] = [];
    const hooks = {
      start: (_id: symbol, _context: BaseRpcContext, done: () => Promise<unknown>) => done(),
      end: () => calls.push('end'),
    };
    await expect(withProcessingHooks(hooks, id, context, () => Promise.resolve(1))).resolves.toBe(1);
    await expect(withProcessingHooks(hooks, id, context, () => Promise.reject(new Error('down')))).rejects.toThrow(
      'down',
    );
    expect(calls).toEqual(['end', 'end']);
  });

  it('settles when the hook drops what done returns, and runs the work once when done is called twice', async () => {
    let runs = 0;
    const start = (_id: symbol, _context: BaseRpcContext, done: () => Promise<unknown>) => {
      void done();
      void done();
    };
    const work = () => {
      runs += 1;
      return Promise.reject(new Error('down'));
    };
    await expect(withProcessingHooks({ start, end: undefined }, id, context, work)).rejects.toThrow('down');
    expect(runs).toBe(1);
  });

  it('rejects with what a hook throws before it starts the work, and runs the work alone without hooks', async () => {
    const start = () => {
      throw new Error('hook failed');
    };
    await expect(withProcessingHooks({ start, end: undefined }, id, context, () => Promise.resolve(1))).rejects.toThrow(
      'hook failed',
    );
    await expect(
      withProcessingHooks({ start: undefined, end: undefined }, id, context, () => Promise.resolve(2)),
    ).resolves.toBe(2);
  });
});
