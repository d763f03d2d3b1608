import type { ClientOp, FaultOp, FinalReadOp, HistoryOp } from './history-op';

/** What explained one delivery beyond a message's first. */
export type DuplicateCause = 'lease-expired' | 'ack-failed' | 'kill-consumer' | 'stop-consumer' | 'failover' | 'repush';

export interface HistoryVerdict {
  /** No loss, nothing unexpected, every duplicate explained (losses to a failover are reported, not violations). */
  valid: boolean;
  counts: {
    /** Distinct ids the producer tried to push. */
    pushes: number;
    pushOk: number;
    pushFail: number;
    pushInfo: number;
    deliveries: number;
    acks: number;
    lost: number;
    unexpected: number;
    /** Deliveries beyond each message's first. */
    duplicates: number;
    unexplainedDuplicates: number;
    /** Ids with an indeterminate push that were delivered. */
    recovered: number;
    lostToFailover: number;
    /** Delivered, gone from Redis at the end, ack not reported: its process died or its reply was lost after the ack ran. */
    ackedUnreported: number;
  };
  /** What explained the duplicates, by cause. */
  explainedBy: Partial<Record<DuplicateCause, number>>;
  lost: { id: string; reason: string; ops: HistoryOp[] }[];
  unexpected: ClientOp[];
  unexplained: { delivery: ClientOp; earlier: ClientOp[] }[];
  recovered: string[];
  lostToFailover: { id: string; push: ClientOp; failover: FaultOp }[];
}

export interface CheckOptions {
  /**
   * How long before a failover a confirmed write may still be missing on the promoted replica
   * (replication is asynchronous). A push confirmed earlier than this and lost is a violation.
   */
  failoverWindowUs?: number;
}

const FAILOVER_WINDOW_US = 1_000_000;

/** Ends of a delivery after which its ack may have run unreported: its process died, or the ack's reply was lost. */
const ACK_MAY_HAVE_RUN = new Set<DuplicateCause | undefined>(['kill-consumer', 'ack-failed']);

/**
 * Faults that lose the replies in flight with them, a Redis kill's to a process whose ack it had
 * already applied (and, with AOF, kept). ioredis sends the ack again once Redis is back: it finds
 * the message gone, and past the lease's deadline the library cannot tell its own ack from another
 * delivery's, so it reports the lease lost. The message is gone, and no other delivery took it.
 */
const REPLY_LOSING = new Set<FaultOp['kind']>(['kill-redis', 'cut-connections']);

/**
 * Checks a history against the total-queue model: every push confirmed `ok` (or indeterminate and
 * then seen) is delivered and acked by the end; nothing is delivered that was never pushed; each
 * delivery beyond the first is paired with the fault that explains it. Deterministic: a pure function
 * of the ops. Mirrors the promises of test/support/fault-ledger.ts's `tally`, on a recorded history.
 */
export function checkHistory(history: readonly HistoryOp[], options: CheckOptions = {}): HistoryVerdict {
  const windowUs = options.failoverWindowUs ?? FAILOVER_WINDOW_US;
  const ops = [...history].sort((a, b) => a.index - b.index);
  const client = ops.filter((op): op is ClientOp => op.f === 'push' || op.f === 'deliver' || op.f === 'ack');
  const faults = ops.filter((op): op is FaultOp => op.f === 'fault');
  const finalRead = ops.find((op): op is FinalReadOp => op.f === 'final-read');
  const stored = new Set(finalRead?.stored ?? []);
  const failovers = faults.filter((op) => op.kind === 'failover');
  const byId = groupById(client, faults);

  const verdict: HistoryVerdict = {
    valid: true,
    counts: {
      pushes: 0,
      pushOk: 0,
      pushFail: 0,
      pushInfo: 0,
      deliveries: 0,
      acks: 0,
      lost: 0,
      unexpected: 0,
      duplicates: 0,
      unexplainedDuplicates: 0,
      recovered: 0,
      lostToFailover: 0,
      ackedUnreported: 0,
    },
    explainedBy: {},
    lost: [],
    unexpected: [],
    unexplained: [],
    recovered: [],
    lostToFailover: [],
  };
  const { counts } = verdict;

  for (const [id, of] of byId) {
    const pushes = of.client.filter((op) => op.f === 'push');
    const deliveries = of.client.filter((op) => op.f === 'deliver' && op.type === 'ok');
    const acks = of.client.filter((op) => op.f === 'ack' && op.type === 'ok');
    counts.deliveries += deliveries.length;
    counts.acks += acks.length;
    if (!pushes.some((op) => op.type === 'invoke')) {
      verdict.unexpected.push(...deliveries);
      continue;
    }
    counts.pushes++;
    const okPushes = pushes.filter((op) => op.type === 'ok');
    counts.pushOk += okPushes.length;
    counts.pushFail += pushes.filter((op) => op.type === 'fail').length;
    const infoPushes = pushes.filter((op) => op.type === 'info');
    counts.pushInfo += infoPushes.length;
    if (infoPushes.length > 0 && deliveries.length > 0) verdict.recovered.push(id);

    // Asked for each delivery by the ack check and again by the duplicate check: found once.
    const ends = new Map<ClientOp, DeliveryEnd | undefined>();
    const ended = (delivery: ClientOp) => {
      if (!ends.has(delivery)) ends.set(delivery, endOf(delivery, of.faults, faults, acks, deliveries));
      return ends.get(delivery);
    };
    const ackedUnreported =
      acks.length === 0 &&
      deliveries.length > 0 &&
      finalRead !== undefined &&
      !stored.has(id) &&
      // Only an end that may have come after the ack ran: a lease reported lost means the ack was
      // refused, unless a fault lost the ack's reply before that report.
      deliveries.some((delivery) => {
        const end = ended(delivery);
        return ACK_MAY_HAVE_RUN.has(end?.cause) || ackReplyLost(delivery, end, faults);
      });
    if (ackedUnreported) counts.ackedUnreported++;

    const required = okPushes.length > 0 || (infoPushes.length > 0 && deliveries.length > 0);
    const done = deliveries.length > 0 && (acks.length > 0 || ackedUnreported);
    if (required && (!done || stored.has(id))) {
      const firstOk = okPushes[0];
      const failover = firstOk && failovers.find((f) => f.time >= firstOk.time && f.time - firstOk.time <= windowUs);
      if (failover && !stored.has(id)) verdict.lostToFailover.push({ id, push: firstOk, failover });
      else
        verdict.lost.push({
          id,
          reason: lossReason(of.faults, deliveries, stored.has(id)),
          ops: [...of.client, ...of.faults],
        });
    }

    checkDuplicates(deliveries, pushes, faults, ended, verdict);
  }

  counts.lost = verdict.lost.length;
  counts.unexpected = verdict.unexpected.length;
  counts.unexplainedDuplicates = verdict.unexplained.length;
  counts.recovered = verdict.recovered.length;
  counts.lostToFailover = verdict.lostToFailover.length;
  verdict.valid = counts.lost === 0 && counts.unexpected === 0 && counts.unexplainedDuplicates === 0;
  return verdict;
}

/** Each delivery after the first needs a cause of its own: an earlier delivery that ended without its ack, a failover, or a push that stored the id again. */
function checkDuplicates(
  deliveries: ClientOp[],
  pushes: ClientOp[],
  faults: FaultOp[],
  ended: (delivery: ClientOp) => DeliveryEnd | undefined,
  verdict: HistoryVerdict,
): void {
  const failovers = faults.filter((op) => op.kind === 'failover');
  const usedDeliveries = new Set<ClientOp>();
  const usedFailovers = new Set<FaultOp>();
  // A push answered `duplicate: false` after the id was delivered stored it again (the first was acked
  // and deleted): it explains one more delivery.
  const storingPushes = pushes.filter((op) => op.type === 'ok' && op.duplicate === false);
  const usedPushes = new Set<ClientOp>();
  // A push that failed with REDIS_UNAVAILABLE was not withdrawn: the client may still send it once
  // Redis is back, after a later attempt's copy was acked (docs/guarantees.md, At-least-once). Each
  // such push may have stored the id once, and once more for each fault that lost replies after it
  // was sent: ioredis resends a command whose reply a dropped connection lost, so one that ran before
  // the fault runs again after it. One of all the stores made the first copy, so together they
  // explain at most one delivery fewer than they could have stored.
  const indeterminate = pushes.filter((op) => op.type === 'info');
  const invokedAt = (info: ClientOp) =>
    pushes.find((op) => op.type === 'invoke' && op.attempt === info.attempt)?.time ?? info.time;
  const storesBy = (info: ClientOp, until: number) =>
    invokedAt(info) > until
      ? 0
      : 1 + faults.filter((f) => REPLY_LOSING.has(f.kind) && f.time >= invokedAt(info) && f.time <= until).length;
  const indeterminateUses = new Map<ClientOp, number>();
  for (let k = 1; k < deliveries.length; k++) {
    const delivery = deliveries[k];
    const earlier = deliveries.slice(0, k);
    verdict.counts.duplicates++;
    let cause: DuplicateCause | undefined;
    for (const previous of earlier) {
      if (usedDeliveries.has(previous)) continue;
      const end = ended(previous);
      if (!end || end.at > delivery.time) continue;
      usedDeliveries.add(previous);
      cause = end.cause;
      break;
    }
    // Recorded late: its process stopped between taking the message and saying so, and a later
    // attempt, recorded first, ran meanwhile. This one started first; its own lost lease explains the other.
    if (!cause && isRecordedLate(delivery, earlier) && !usedDeliveries.has(delivery)) {
      const end = ended(delivery);
      if (end) {
        usedDeliveries.add(delivery);
        cause = end.cause;
      }
    }
    if (!cause) {
      const failover = failovers.find(
        (f) => !usedFailovers.has(f) && f.time >= earlier[0].time && f.time <= delivery.time,
      );
      if (failover) {
        usedFailovers.add(failover);
        cause = 'failover';
      }
    }
    if (!cause) {
      const push = storingPushes.find(
        (p) => !usedPushes.has(p) && p.time >= earlier[0].time && p.time <= delivery.time,
      );
      if (push) {
        usedPushes.add(push);
        cause = 'repush';
      }
    }
    if (!cause) {
      const stores = (p: ClientOp) => storesBy(p, delivery.time);
      const mayHaveStored = storingPushes.length + indeterminate.reduce((sum, p) => sum + stores(p), 0);
      const used = usedPushes.size + [...indeterminateUses.values()].reduce((sum, n) => sum + n, 0);
      const push = indeterminate.find((p) => (indeterminateUses.get(p) ?? 0) < stores(p));
      if (push && used + 1 < mayHaveStored) {
        indeterminateUses.set(push, (indeterminateUses.get(push) ?? 0) + 1);
        cause = 'repush';
      }
    }
    if (cause) verdict.explainedBy[cause] = (verdict.explainedBy[cause] ?? 0) + 1;
    else verdict.unexplained.push({ delivery, earlier });
  }
}

/** How a delivery ended without its ack: the cause, from when it lets the message be delivered again, the library's report of it. */
interface DeliveryEnd {
  cause: DuplicateCause;
  at: number;
  report?: FaultOp;
}

/**
 * How a delivery ended without its ack, and from when that lets the message be delivered again;
 * undefined when it was acked or nothing ended it. A lease reported lost or an ack reported failed
 * count whenever they are reported (a stopped process reports late); a kill or a stop must come
 * after the delivery started.
 */
function endOf(
  delivery: ClientOp,
  idFaults: FaultOp[],
  allFaults: FaultOp[],
  acks: ClientOp[],
  deliveries: ClientOp[],
): DeliveryEnd | undefined {
  const pid = pidOf(delivery);
  const sameDelivery = (op: { pid?: number; attempt?: number; process: string }) =>
    (op.pid ?? pidOf(op)) === pid &&
    (op.attempt === undefined || delivery.attempt === undefined || op.attempt === delivery.attempt);
  if (acks.some(sameDelivery)) return undefined;
  // The ops a process reports about a message belong to its latest delivery of it before them.
  const owns = (op: FaultOp) => sameDelivery(op) && latestDeliveryOf(deliveries, pid, op) === delivery;
  for (const cause of ['lease-expired', 'ack-failed'] as const) {
    const report = idFaults.find((op) => op.kind === cause && owns(op));
    if (report) return { cause, at: -Infinity, report };
  }
  for (const cause of ['kill-consumer', 'stop-consumer'] as const) {
    const fault = allFaults.find((op) => op.kind === cause && op.pid === pid && op.time >= delivery.time);
    if (fault) return { cause, at: fault.time };
  }
  return undefined;
}

/** A delivery of a lower attempt than one recorded before it, from the same stored copy of the message. */
function isRecordedLate(delivery: ClientOp, earlier: ClientOp[]): boolean {
  const attempt = delivery.attempt;
  return attempt !== undefined && earlier.some((op) => op.attempt !== undefined && op.attempt > attempt);
}

/**
 * Whether a fault that loses the replies in flight struck between this delivery's start and the
 * report of its lost lease: its ack may have run, its answer lost.
 */
function ackReplyLost(delivery: ClientOp, end: DeliveryEnd | undefined, allFaults: FaultOp[]): boolean {
  const report = end?.cause === 'lease-expired' ? end.report : undefined;
  return (
    report !== undefined &&
    allFaults.some((op) => REPLY_LOSING.has(op.kind) && op.time >= delivery.time && op.index < report.index)
  );
}

function latestDeliveryOf(deliveries: ClientOp[], pid: number | undefined, op: FaultOp): ClientOp | undefined {
  const candidates = deliveries.filter(
    (d) =>
      pidOf(d) === pid &&
      d.index < op.index &&
      (op.attempt === undefined || d.attempt === undefined || d.attempt === op.attempt),
  );
  return candidates[candidates.length - 1];
}

function lossReason(idFaults: FaultOp[], deliveries: ClientOp[], stillStored: boolean): string {
  if (idFaults.some((op) => op.kind === 'dead-lettered')) return 'dead-lettered';
  if (stillStored) return 'still stored in Redis at the end';
  if (deliveries.length === 0) return 'confirmed push never delivered';
  return 'delivered, gone from Redis, but no ack reported and no fault explains it';
}

function groupById(client: ClientOp[], faults: FaultOp[]) {
  const byId = new Map<string, { client: ClientOp[]; faults: FaultOp[] }>();
  const entry = (id: string) => {
    let of = byId.get(id);
    if (!of) byId.set(id, (of = { client: [], faults: [] }));
    return of;
  };
  for (const op of client) entry(op.id).client.push(op);
  for (const op of faults) if (typeof op.id === 'string' && byId.has(op.id)) byId.get(op.id)!.faults.push(op);
  return byId;
}

/** `pid:<n>` → n. */
function pidOf(op: { process: string }): number | undefined {
  return op.process.startsWith('pid:') ? Number(op.process.slice(4)) : undefined;
}
