import { seededRandom } from '../../support/fault-ledger';

/** The faults a run can inject; a run's seed picks one (seed modulo their count) and its timings. */
export const FAULT_KINDS = [
  'kill-consumer',
  'stop-consumer',
  'kill-redis-always',
  'kill-redis-everysec',
  'sentinel-failover',
  'cut-connections',
  'push-retry',
] as const;
export type RunKind = (typeof FAULT_KINDS)[number];

export interface RunPlan {
  seed: number;
  kind: RunKind;
  messages: number;
  consumers: number;
  /** The consumers' lease; a stop outlasts it. */
  leaseMs: number;
  handlerMs: number;
  /** How long the producer spreads its pushes over. */
  produceMs: number;
  /**
   * Consumers keep acked messages as completed records (`keepCompleted`): a push retried or resent
   * after its first copy was acked is then a duplicate, not a new message (push-retry runs).
   */
  keepCompleted: boolean;
  /** When each fault starts (ms after the producer's start) and how long it lasts, where it lasts. */
  faults: { atMs: number; lastsMs: number }[];
}

/**
 * The whole run from its seed: the fault kind, counts, timings. `scale` 1 is a long-mode run (about
 * 20-30 s with its drain); CI runs take a smaller one.
 */
export function planRun(seed: number, scale = 1): RunPlan {
  const random = seededRandom(seed);
  const between = (low: number, high: number) => Math.round(low + random() * (high - low));
  const kind = FAULT_KINDS[seed % FAULT_KINDS.length];
  const leaseMs = 1000;
  const produceMs = Math.round(between(8_000, 12_000) * scale);
  const count = kind === 'sentinel-failover' ? 1 : between(1, 3);
  const lasts = (): number => {
    if (kind === 'stop-consumer') return between(leaseMs * 2, leaseMs * 3);
    if (kind === 'kill-redis-always' || kind === 'kill-redis-everysec') return between(200, 1_500);
    // Longer than the producer's commandTimeoutMs (2 s): the push whose reply was dropped goes indeterminate.
    if (kind === 'push-retry') return between(2_500, 3_500);
    // How long the replica lags (frozen) before the master dies: what it confirmed meanwhile is lost.
    if (kind === 'sentinel-failover') return between(300, 800);
    return 0;
  };
  // Faults spread over the production, each in its own slice so that two never overlap.
  const slice = (produceMs - 1_000) / count;
  const faults = Array.from({ length: count }, (_, i) => ({
    atMs: Math.round(500 + i * slice + random() * slice * 0.4),
    lastsMs: lasts(),
  }));
  return {
    seed,
    kind,
    messages: Math.round(between(150, 300) * scale),
    consumers: between(2, 3),
    leaseMs,
    handlerMs: between(20, 120),
    keepCompleted: kind === 'push-retry',
    produceMs,
    faults,
  };
}
