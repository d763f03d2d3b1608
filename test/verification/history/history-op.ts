/**
 * One operation of a recorded fault run, in the shape of a Jepsen history: an `invoke` and its
 * completion (`ok`, `fail` when known not applied, `info` when the outcome is unknown) for pushes;
 * a completed `ok` for each handler start (`deliver`) and each ack the library confirmed; and the
 * faults the runner injected or the library reported (`f: 'fault'`).
 */
export type OpType = 'invoke' | 'ok' | 'fail' | 'info';

/** What the runner injected, and what the library reported that ends a delivery early. */
export type FaultKind =
  /** The runner SIGKILLed a consumer process (`pid`). */
  | 'kill-consumer'
  /** The runner SIGSTOPped a consumer process (`pid`), then `cont-consumer` after `stoppedMs`. */
  | 'stop-consumer'
  | 'cont-consumer'
  /** The runner SIGKILLed redis-server (`appendfsync` says the AOF mode) and `restart-redis` after `downMs`. */
  | 'kill-redis'
  | 'restart-redis'
  /** The runner froze the replica (SIGSTOP, its link cut) for `frozenMs`, so that it lags the master. */
  | 'freeze-replica'
  /** The runner SIGKILLed the Sentinel-watched master; `failover-done` once a replica is master. */
  | 'failover'
  | 'failover-done'
  /** The runner's proxy cut every client connection (`count`). */
  | 'cut-connections'
  /** The runner's proxy dropped the reply to the push of `id` (the push ran; its caller never heard). */
  | 'drop-push-reply'
  /** The proxy let connections through again after a drop held them. */
  | 'reopen-connections'
  /** The library reported (events$ `lease-lost`) that a delivery's lease ran out before its ack. */
  | 'lease-expired'
  /** The library reported (events$ `error` with an id) that a delivery's ack failed: its lease runs out. */
  | 'ack-failed'
  /** The library dead-lettered the message (its last lease ran out). */
  | 'dead-lettered';

interface OpBase {
  /** Position in the history, from 0, in time order. */
  index: number;
  /** Who did it: `producer`, `pid:<n>` for a consumer process, `nemesis` for the runner's faults. */
  process: string;
  /** The Redis server's clock, in microseconds. */
  time: number;
}

export interface ClientOp extends OpBase {
  type: OpType;
  f: 'push' | 'deliver' | 'ack';
  /** The message id. */
  id: string;
  /** Of a delivery and its ack: the library's attempt number; of a push: the producer's try, from 1. */
  attempt?: number;
  /** Of a push `ok`: whether the library answered `duplicate: true` (the id was already stored). */
  duplicate?: boolean;
  /** Of a push `fail` or `info`: the error's code. */
  error?: string;
}

export interface FaultOp extends OpBase {
  type: 'info';
  f: 'fault';
  kind: FaultKind;
  /** The consumer process a fault hit, or that reported it. */
  pid?: number;
  /** The message a reported fault is about. */
  id?: string;
  attempt?: number;
  /** Anything else the fault did (downMs, appendfsync, old and new master ports, count). */
  [detail: string]: unknown;
}

/** The last op of a run: which ids Redis still stores once everything settled. */
export interface FinalReadOp extends OpBase {
  type: 'ok';
  f: 'final-read';
  stored: string[];
}

export type HistoryOp = ClientOp | FaultOp | FinalReadOp;

/** An op before the recorder numbered it. */
export type UnindexedOp = DistributiveOmit<HistoryOp, 'index'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
