import { AckBatcher } from '../../lib/consumer/ack-batcher';
import { deferred, turns } from '../support/async-helpers';

/** A batcher over string leases whose send answers true for every lease unless told otherwise. */
function batcher(send: (leases: string[]) => Promise<boolean[]> = (leases) => Promise.resolve(leases.map(() => true))) {
  const sends: string[][] = [];
  const settled: [string, boolean][] = [];
  const failed: [string, unknown][] = [];
  const acks = new AckBatcher<string>(
    (leases) => (sends.push([...leases]), send(leases)),
    (lease, acked) => void settled.push([lease, acked]),
    (lease, error) => void failed.push([lease, error]),
  );
  return { acks, sends, settled, failed };
}

describe('AckBatcher', () => {
  it('sends the acks of one event-loop turn in one call, and answers each lease', async () => {
    const { acks, sends, settled } = batcher((leases) => Promise.resolve(leases.map((lease) => lease !== 'b')));
    acks.ack('a');
    acks.ack('b');
    acks.ack('c');
    await acks.drain();
    expect(sends).toEqual([['a', 'b', 'c']]);
    expect(settled).toEqual([
      ['a', true],
      ['b', false],
      ['c', true],
    ]);
  });

  it('leaves the acks that may not ride along to its own call (kept completed records)', async () => {
    const sends: string[][] = [];
    const acks = new AckBatcher<string>(
      (leases) => (sends.push([...leases]), Promise.resolve(leases.map(() => true))),
      () => undefined,
      () => undefined,
      (lease) => !lease.startsWith('kept'),
    );
    acks.ack('a');
    acks.ack('kept-1');
    acks.ack('b');
    expect(acks.take(1)).toEqual(['a']);
    expect(acks.take()).toEqual(['b']);
    expect(acks.take()).toEqual([]);
    await acks.drain();
    expect(sends).toEqual([['kept-1']]);
  });

  it('sends acks of a later turn in a call of their own', async () => {
    const { acks, sends } = batcher();
    acks.ack('a');
    await acks.drain();
    acks.ack('b');
    await acks.drain();
    expect(sends).toEqual([['a'], ['b']]);
  });

  it('waits two turns before sending, so a reserve in the next turn can take the acks along', async () => {
    const { acks, sends } = batcher();
    acks.ack('a');
    await turns(1);
    expect(acks.take()).toEqual(['a']);
    await acks.drain();
    expect(sends).toEqual([]);
  });

  it('lets a caller take up to max acks; the rest still go out on their own', async () => {
    const { acks, sends } = batcher();
    for (const lease of ['a', 'b', 'c']) acks.ack(lease);
    expect(acks.take(2)).toEqual(['a', 'b']);
    await acks.drain();
    expect(sends).toEqual([['c']]);
    expect(acks.take()).toEqual([]);
  });

  it('settles and fails taken acks through the same callbacks', () => {
    const { acks, settled, failed } = batcher();
    const error = new Error('reserve failed');
    acks.settle(['a', 'b'], [true, false]);
    acks.fail(['c'], error);
    expect(settled).toEqual([
      ['a', true],
      ['b', false],
    ]);
    expect(failed).toEqual([['c', error]]);
  });

  it('resends taken acks ahead of newer ones, in one call', async () => {
    const { acks, sends } = batcher();
    acks.ack('a');
    acks.ack('b');
    const taken = acks.take();
    acks.ack('c');
    acks.resend(taken);
    acks.resend([]);
    await acks.drain();
    expect(sends).toEqual([['a', 'b', 'c']]);
  });

  it('resends taken acks on their own when nothing else is waiting', async () => {
    const { acks, sends } = batcher();
    acks.ack('a');
    const taken = acks.take();
    await acks.drain();
    acks.resend(taken);
    await acks.drain();
    expect(sends).toEqual([['a']]);
  });

  it('fails every lease of a call that failed', async () => {
    const error = new Error('connection reset');
    const { acks, settled, failed } = batcher(() => Promise.reject(error));
    acks.ack('a');
    acks.ack('b');
    await acks.drain();
    expect(settled).toEqual([]);
    expect(failed).toEqual([
      ['a', error],
      ['b', error],
    ]);
  });

  it('drains only once every ack handed over has its answer', async () => {
    const answer = deferred<boolean[]>();
    const { acks, settled } = batcher(() => answer.promise);
    await acks.drain();
    acks.ack('a');
    let drained = false;
    const draining = acks.drain().then(() => (drained = true));
    await turns(5);
    expect(drained).toBe(false);
    answer.resolve([true]);
    await draining;
    expect(settled).toEqual([['a', true]]);
  });
});
