import { checkHistory } from './history-checker';
import type { ClientOp, FaultOp, HistoryOp, UnindexedOp } from './history-op';

/** Numbers hand-written ops in order, 1 ms apart unless an op sets its time. */
function history(...ops: Partial<UnindexedOp>[]): HistoryOp[] {
  return ops.map((op, index) => ({ process: 'producer', time: (index + 1) * 1000, ...op, index }) as HistoryOp);
}
const push = (id: string, type: ClientOp['type'], extra: Partial<ClientOp> = {}): Partial<ClientOp> => ({
  f: 'push',
  id,
  type,
  attempt: 1,
  ...(type === 'ok' ? { duplicate: false } : {}),
  ...extra,
});
const deliver = (id: string, pid: number, attempt: number, extra: Partial<ClientOp> = {}): Partial<ClientOp> => ({
  f: 'deliver',
  type: 'ok',
  id,
  process: `pid:${pid}`,
  attempt,
  ...extra,
});
const ack = (id: string, pid: number, attempt: number): Partial<ClientOp> => ({
  f: 'ack',
  type: 'ok',
  id,
  process: `pid:${pid}`,
  attempt,
});
const fault = (kind: FaultOp['kind'], extra: Partial<FaultOp> = {}): Partial<FaultOp> => ({
  f: 'fault',
  type: 'info',
  process: extra.pid && extra.id ? `pid:${extra.pid}` : 'nemesis',
  kind,
  ...extra,
});
const finalRead = (...stored: string[]) => ({ f: 'final-read', type: 'ok', process: 'nemesis', stored }) as const;

/** A push, its delivery by process 1, its ack. */
const handledOnce = (id: string) => [push(id, 'invoke'), push(id, 'ok'), deliver(id, 1, 1), ack(id, 1, 1)];

describe('history checker (total-queue model)', () => {
  it('passes a clean history: every confirmed push delivered once and acked', () => {
    const verdict = checkHistory(history(...handledOnce('a'), ...handledOnce('b'), finalRead()));
    expect(verdict.valid).toBe(true);
    expect(verdict.counts).toMatchObject({ pushes: 2, pushOk: 2, deliveries: 2, acks: 2, lost: 0, duplicates: 0 });
  });

  it('flags a confirmed push never delivered as lost', () => {
    const verdict = checkHistory(history(...handledOnce('a'), push('b', 'invoke'), push('b', 'ok'), finalRead()));
    expect(verdict.valid).toBe(false);
    expect(verdict.lost).toEqual([expect.objectContaining({ id: 'b', reason: 'confirmed push never delivered' })]);
  });

  it('flags a delivered message that is neither acked nor explained as lost', () => {
    const verdict = checkHistory(history(push('a', 'invoke'), push('a', 'ok'), deliver('a', 1, 1), finalRead()));
    expect(verdict.counts.lost).toBe(1);
    expect(verdict.lost[0].reason).toMatch(/no ack reported and no fault/);
  });

  it('flags a message still stored at the end as lost, even when delivered', () => {
    const verdict = checkHistory(history(push('a', 'invoke'), push('a', 'ok'), deliver('a', 1, 1), finalRead('a')));
    expect(verdict.lost).toEqual([expect.objectContaining({ id: 'a', reason: 'still stored in Redis at the end' })]);
  });

  it('accepts an ack that ran but was never reported, when its process died and Redis no longer has the message', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        fault('kill-consumer', { pid: 1 }),
        finalRead(),
      ),
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.counts.ackedUnreported).toBe(1);
  });

  it('does not take a lease reported lost for an ack that ran: the message gone with no ack is lost', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        fault('lease-expired', { pid: 1, id: 'a', attempt: 1 }),
        finalRead(),
      ),
    );
    expect(verdict.counts).toMatchObject({ lost: 1, ackedUnreported: 0 });
  });

  it('accepts a lease reported lost after a Redis kill struck while the delivery ran: its ack may have run, its reply lost', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        fault('kill-redis'),
        fault('restart-redis'),
        fault('lease-expired', { pid: 1, id: 'a', attempt: 1 }),
        finalRead(),
      ),
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.counts).toMatchObject({ lost: 0, ackedUnreported: 1 });
  });

  it('does not let a Redis kill before the delivery, or after the lease was reported lost, hide a loss', () => {
    for (const order of ['before', 'after'] as const) {
      const kill = [fault('kill-redis'), fault('restart-redis')];
      const verdict = checkHistory(
        history(
          push('a', 'invoke'),
          push('a', 'ok'),
          ...(order === 'before' ? kill : []),
          deliver('a', 1, 1),
          fault('lease-expired', { pid: 1, id: 'a', attempt: 1 }),
          ...(order === 'after' ? kill : []),
          finalRead(),
        ),
      );
      expect([order, verdict.counts]).toEqual([order, expect.objectContaining({ lost: 1, ackedUnreported: 0 })]);
    }
  });

  it('reports a push confirmed just before a failover, delivered, and gone with the old master as lost-to-failover', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        fault('failover'),
        fault('lease-expired', { pid: 1, id: 'a', attempt: 1 }),
        finalRead(),
      ),
    );
    expect(verdict.counts).toMatchObject({ lost: 0, lostToFailover: 1, ackedUnreported: 0 });
  });

  it('flags a delivery of an id never pushed as unexpected', () => {
    const verdict = checkHistory(history(...handledOnce('a'), deliver('ghost', 2, 1), finalRead()));
    expect(verdict.valid).toBe(false);
    expect(verdict.unexpected).toEqual([expect.objectContaining({ f: 'deliver', id: 'ghost' })]);
  });

  it('explains a second delivery by the lease the library reported lost', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        deliver('a', 2, 2),
        ack('a', 2, 2),
        fault('lease-expired', { pid: 1, id: 'a', attempt: 1 }),
        finalRead(),
      ),
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.counts.duplicates).toBe(1);
    expect(verdict.explainedBy).toEqual({ 'lease-expired': 1 });
  });

  it('explains a redelivery by the kill of the process that held it, and by a stop of it', () => {
    const killed = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        fault('kill-consumer', { pid: 1 }),
        deliver('a', 2, 2),
        ack('a', 2, 2),
        finalRead(),
      ),
    );
    expect(killed.explainedBy).toEqual({ 'kill-consumer': 1 });
    const stopped = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        fault('stop-consumer', { pid: 1 }),
        deliver('a', 2, 2),
        ack('a', 2, 2),
        fault('cont-consumer', { pid: 1 }),
        finalRead(),
      ),
    );
    expect(stopped.valid).toBe(true);
    expect(stopped.explainedBy).toEqual({ 'stop-consumer': 1 });
  });

  it('flags a duplicate with no fault behind it, and one after an ack', () => {
    const unexplained = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        deliver('a', 2, 2),
        ack('a', 2, 2),
        finalRead(),
      ),
    );
    expect(unexplained.valid).toBe(false);
    expect(unexplained.unexplained.map(({ delivery }) => delivery.process)).toEqual(['pid:2']);
    const afterAck = checkHistory(
      history(...handledOnce('a'), fault('kill-consumer', { pid: 1 }), deliver('a', 2, 2), ack('a', 2, 2), finalRead()),
    );
    expect(afterAck.counts.unexplainedDuplicates).toBe(1);
  });

  it('explains a delivery recorded after a later attempt (its process stopped before saying so) by its own lost lease', () => {
    const late = [
      push('a', 'invoke'),
      push('a', 'ok'),
      fault('stop-consumer', { pid: 1 }),
      deliver('a', 2, 2),
      ack('a', 2, 2),
      fault('cont-consumer', { pid: 1 }),
      deliver('a', 1, 1),
    ];
    const explained = checkHistory(
      history(...late, fault('lease-expired', { pid: 1, id: 'a', attempt: 1 }), finalRead()),
    );
    expect(explained.valid).toBe(true);
    expect(explained.explainedBy).toEqual({ 'lease-expired': 1 });
    // Without its lost lease reported, nothing explains it.
    const unexplained = checkHistory(history(...late, finalRead()));
    expect(unexplained.counts.unexplainedDuplicates).toBe(1);
  });

  it('does not let one fault explain two duplicates', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        deliver('a', 1, 1),
        fault('lease-expired', { pid: 1, id: 'a', attempt: 1 }),
        deliver('a', 2, 2),
        deliver('a', 3, 3),
        ack('a', 3, 3),
        finalRead(),
      ),
    );
    expect(verdict.counts).toMatchObject({ duplicates: 2, unexplainedDuplicates: 1 });
  });

  it('does not let a kill before the delivery explain it', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        fault('kill-consumer', { pid: 1 }),
        deliver('a', 1, 1),
        deliver('a', 2, 2),
        ack('a', 2, 2),
        finalRead(),
      ),
    );
    expect(verdict.counts.unexplainedDuplicates).toBe(1);
  });

  it('counts an indeterminate push that was delivered as recovered, and one never seen as not lost', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'info', { error: 'REDIS_UNAVAILABLE' }),
        deliver('a', 1, 1),
        ack('a', 1, 1),
        push('b', 'invoke'),
        push('b', 'info', { error: 'REDIS_UNAVAILABLE' }),
        finalRead(),
      ),
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.recovered).toEqual(['a']);
    expect(verdict.counts).toMatchObject({ pushInfo: 2, recovered: 1, lost: 0 });
  });

  it('flags an indeterminate push that was seen and then never acked as lost', () => {
    const verdict = checkHistory(history(push('a', 'invoke'), push('a', 'info'), deliver('a', 1, 1), finalRead('a')));
    expect(verdict.counts.lost).toBe(1);
  });

  it('ignores a push known not applied (fail)', () => {
    const verdict = checkHistory(
      history(push('a', 'invoke'), push('a', 'fail', { error: 'REDIS_COMMAND' }), finalRead()),
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.counts.pushFail).toBe(1);
  });

  it('explains a second delivery after a retried push that stored the id again (the first was acked and deleted)', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'info'),
        deliver('a', 1, 1),
        ack('a', 1, 1),
        push('a', 'invoke', { attempt: 2 }),
        push('a', 'ok', { attempt: 2, duplicate: false }),
        deliver('a', 1, 1),
        ack('a', 1, 1),
        finalRead(),
      ),
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.explainedBy).toEqual({ repush: 1 });
  });

  it('explains a second delivery by a failed push the client sent once Redis was back, only when another push made the first copy', () => {
    // Seed 7002 on Valkey: attempts 1 and 2 failed with REDIS_UNAVAILABLE while Redis was down, both
    // were sent when it came back, each stored the id (the first copy acked in between), and attempt 3
    // then found the second copy (duplicate: true).
    const twoFailed = [
      push('a', 'invoke'),
      push('a', 'info', { error: 'REDIS_UNAVAILABLE' }),
      push('a', 'invoke', { attempt: 2 }),
      push('a', 'info', { attempt: 2, error: 'REDIS_UNAVAILABLE' }),
      push('a', 'invoke', { attempt: 3 }),
      deliver('a', 1, 1),
      ack('a', 1, 1),
      deliver('a', 1, 1),
      push('a', 'ok', { attempt: 3, duplicate: true }),
      ack('a', 1, 1),
      finalRead(),
    ];
    const explained = checkHistory(history(...twoFailed));
    expect(explained.valid).toBe(true);
    expect(explained.explainedBy).toEqual({ repush: 1 });
    // One failed push can have stored the id only once: it made the first copy, nothing made the second.
    const oneFailed = twoFailed.filter((op) => !('attempt' in op) || op.attempt !== 2);
    expect(checkHistory(history(...oneFailed)).counts.unexplainedDuplicates).toBe(1);
  });

  it('explains a second copy by a failed push that ran before a Redis kill lost its reply and ran again when ioredis resent it', () => {
    // Seed 7002 on Redis 7: attempt 1 ran and the kill lost its reply (REDIS_UNAVAILABLE); the consumer
    // took and acked that copy once Redis was back; then the producer's connection came back and
    // ioredis resent attempt 1, which stored the id again; attempt 2 found that copy (duplicate: true).
    const resent = (withKill: boolean) => [
      push('a', 'invoke'),
      ...(withKill ? [fault('kill-redis'), fault('restart-redis')] : []),
      push('a', 'info', { error: 'REDIS_UNAVAILABLE' }),
      deliver('a', 1, 1),
      ack('a', 1, 1),
      push('a', 'invoke', { attempt: 2 }),
      push('a', 'ok', { attempt: 2, duplicate: true }),
      deliver('a', 1, 1),
      ack('a', 1, 1),
      finalRead(),
    ];
    const explained = checkHistory(history(...resent(true)));
    expect(explained.valid).toBe(true);
    expect(explained.explainedBy).toEqual({ repush: 1 });
    // Without a fault that lost replies after it was sent, nothing resent it: it stored the id once.
    expect(checkHistory(history(...resent(false))).counts.unexplainedDuplicates).toBe(1);
    // One kill lets it run twice, not three times.
    const third = [...resent(true).slice(0, -1), deliver('a', 1, 1), ack('a', 1, 1), finalRead()];
    expect(checkHistory(history(...third)).counts.unexplainedDuplicates).toBe(1);
  });

  it('reports a confirmed push lost by a failover right after it as lost-to-failover, with the failover', () => {
    const verdict = checkHistory(
      history(
        push('a', 'invoke'),
        push('a', 'ok'),
        fault('failover', { time: 2500 }),
        ...handledOnce('b'),
        finalRead(),
      ),
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.counts).toMatchObject({ lost: 0, lostToFailover: 1 });
    expect(verdict.lostToFailover.map(({ id, push, failover }) => [id, push.type, failover.kind])).toEqual([
      ['a', 'ok', 'failover'],
    ]);
  });

  it('flags a push confirmed long before the failover and then lost as lost, not lost-to-failover', () => {
    const verdict = checkHistory(
      history(push('a', 'invoke'), push('a', 'ok'), fault('failover', { time: 5_000_000 }), finalRead()),
    );
    expect(verdict.counts).toMatchObject({ lost: 1, lostToFailover: 0 });
  });

  it('explains a delivery again after a failover that lost the ack', () => {
    const verdict = checkHistory(
      history(...handledOnce('a'), fault('failover'), deliver('a', 2, 1), ack('a', 2, 1), finalRead()),
    );
    expect(verdict.valid).toBe(true);
    expect(verdict.explainedBy).toEqual({ failover: 1 });
  });

  it('gives the same verdict whatever the order the ops are handed in', () => {
    const ops = history(
      push('a', 'invoke'),
      push('a', 'ok'),
      deliver('a', 1, 1),
      fault('kill-consumer', { pid: 1 }),
      deliver('a', 2, 2),
      ack('a', 2, 2),
      finalRead(),
    );
    expect(checkHistory([...ops].reverse())).toEqual(checkHistory(ops));
  });
});
