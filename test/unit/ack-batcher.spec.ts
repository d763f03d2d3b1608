import { AckBatcher } from '../../lib/consumer/ack-batcher';
import { deferred, turns } from '../support/async-helpers';

/** A batcher over string leases whose send answers true for every lease unless told otherwise. */
function batcher(send: (leases: string[]) => Promise<boolean[]> = (leases) => Promise.resolve(leases.map(() => true))) {
  const sends: string[][] = [];
  const settled: [string, boolean][] = [];
  const failed: [string, unknown][] = [];
  const acks = new AckBatcher<string>({
    send: (leases) => (sends.push([...leases]), send(leases)),
    settled: (lease, acked) => void settled.push([lease, acked]),
    failed: (lease, error) => void failed.push([lease, error]),
    rideAlong: () => true,
  });
  return { acks, sends, settled, failed };
}

/** What a reserve carrying up to `max` acks gets (it answers each one acked, unless `answer` says otherwise). */
function carry(acks: AckBatcher<string>, max = Infinity, answer?: Promise<{ acked: boolean[] }>): string[] {
  let carried: string[] = [];
  void acks
    .carry(max, (leases) => ((carried = [...leases]), answer ?? Promise.resolve({ acked: leases.map(() => true) })))
    .catch(() => undefined);
  return carried;
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
    const acks = new AckBatcher<string>({
      send: (leases) => (sends.push([...leases]), Promise.resolve(leases.map(() => true))),
      settled: () => undefined,
      failed: () => undefined,
      rideAlong: (lease) => !lease.startsWith('kept'),
    });
    acks.ack('a');
    acks.ack('kept-1');
    acks.ack('b');
    expect(carry(acks, 1)).toEqual(['a']);
    expect(carry(acks)).toEqual(['b']);
    expect(carry(acks)).toEqual([]);
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

  it('waits two turns before sending, so a reserve in the next turn can carry the acks', async () => {
    const { acks, sends } = batcher();
    acks.ack('a');
    await turns(1);
    expect(carry(acks)).toEqual(['a']);
    await acks.drain();
    expect(sends).toEqual([]);
  });

  it('lets a call carry up to max acks; the rest still go out on their own', async () => {
    const { acks, sends } = batcher();
    for (const lease of ['a', 'b', 'c']) acks.ack(lease);
    expect(carry(acks, 2)).toEqual(['a', 'b']);
    await acks.drain();
    expect(sends).toEqual([['c']]);
    expect(carry(acks)).toEqual([]);
  });

  it('settles carried acks from the answer of the call that carried them, before its caller sees it', async () => {
    const { acks, sends, settled, failed } = batcher();
    acks.ack('a');
    acks.ack('b');
    const answer = { acked: [true, false], messages: ['m1'] };
    const reserved = await acks.carry(10, () => Promise.resolve(answer));
    expect(reserved).toBe(answer);
    expect(settled).toEqual([
      ['a', true],
      ['b', false],
    ]);
    await acks.drain();
    expect(sends).toEqual([]);
    expect(failed).toEqual([]);
  });

  it('resends carried acks ahead of newer ones, in one call, when the carrying call failed', async () => {
    const { acks, sends, failed } = batcher();
    const answer = deferred<{ acked: boolean[] }>();
    acks.ack('a');
    acks.ack('b');
    expect(carry(acks, Infinity, answer.promise)).toEqual(['a', 'b']);
    acks.ack('c');
    answer.reject(new Error('reserve failed'));
    await acks.drain();
    expect(sends).toEqual([['a', 'b', 'c']]);
    expect(failed).toEqual([]);
  });

  it('resends carried acks on their own when nothing else is waiting', async () => {
    const { acks, sends } = batcher();
    const answer = deferred<{ acked: boolean[] }>();
    acks.ack('a');
    carry(acks, Infinity, answer.promise);
    await turns(5);
    expect(sends).toEqual([]);
    answer.reject(new Error('reserve failed'));
    await acks.drain();
    expect(sends).toEqual([['a']]);
  });

  it('calls a carrier with nothing to carry at once, with no acks', async () => {
    const { acks, sends } = batcher();
    const carried: string[][] = [];
    await acks.carry(10, (leases) => (carried.push([...leases]), Promise.resolve({ acked: [] })));
    expect(carried).toEqual([[]]);
    await acks.drain();
    expect(sends).toEqual([]);
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

  it('drains only once the call carrying acks has answered', async () => {
    const answer = deferred<{ acked: boolean[] }>();
    const { acks, settled } = batcher();
    acks.ack('a');
    carry(acks, Infinity, answer.promise);
    let drained = false;
    const draining = acks.drain().then(() => (drained = true));
    await turns(5);
    expect(drained).toBe(false);
    answer.resolve({ acked: [true] });
    await draining;
    expect(settled).toEqual([['a', true]]);
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
