import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A past release the upgrade tests run, and what its consumers can serve of what the current code writes. */
export interface PastRelease {
  version: string;
  /** Its packed build in test/upgrade/releases/. */
  tarball: string;
  /**
   * Its consumers serve the grouped messages the current code pushes. A change that stores groups where they
   * cannot sets this to false and says in docs/upgrading.md how to deploy it (that release's consumers of grouped
   * topics stop before the current ones start; its producers may go on): the tests then take that path.
   */
  servesCurrentGroups: boolean;
}

/** The release before the current code: 0.1.0, commit e990c45 (test/upgrade/releases/README.md). */
export const PREVIOUS_RELEASE: PastRelease = {
  version: '0.1.0',
  tarball: '0.1.0-e990c45.tgz',
  servesCurrentGroups: true,
};

/**
 * The part of 0.1.0's public API (its `RedisAckQueueService`) the upgrade tests drive, written out here
 * rather than taken from lib/: the old build keeps its API whatever the current code's types become.
 */
export interface ReleaseQueueService {
  connect(): Promise<void>;
  push(topic: string, payload: unknown, options?: ReleasePushOptions): Promise<{ id: string; duplicate: boolean }>;
  pushMany(
    topic: string,
    items: (ReleasePushOptions & { payload: unknown })[],
  ): Promise<{ id: string; duplicate: boolean }[]>;
  reserve(
    topic: string,
    options?: { count?: number; leaseMs?: number; maxAttempts?: number },
  ): Promise<ReleaseReserved[]>;
  ack(message: ReleaseReserved, result?: unknown): Promise<boolean>;
  nack(message: ReleaseReserved, options?: { delayMs?: number; error?: unknown }): Promise<'retry' | 'dead' | 'lost'>;
  consume(
    topic: string,
    handler: (payload: unknown, context: ReleaseContext) => unknown,
    options?: ReleaseHandlerOptions,
  ): { close(drainMs?: number): Promise<void> };
  stats(topic: string): Promise<{ ready: number; delayed: number; leased: number; dead: number }>;
  deadLetters(topic: string): Promise<ReleaseDeadLetter[]>;
  requeueDead(topic: string, ids?: string[]): Promise<number>;
  get(topic: string, id: string): Promise<ReleaseMessageInfo | null>;
  waitUntilIdle(topic: string): Promise<void>;
  pause(topic: string): Promise<void>;
  setLimits(topic: string, limits: Record<string, unknown> | null): Promise<void>;
  upsertSchedule(
    topic: string,
    name: string,
    options: { everyMs?: number; cron?: string; payload?: unknown; headers?: Record<string, string> },
  ): Promise<unknown>;
  topics(): Promise<string[]>;
  close(drainMs?: number): Promise<void>;
}

/** 0.1.0's push options. */
export interface ReleasePushOptions {
  id?: string;
  delayMs?: number;
  maxAttempts?: number;
  headers?: Record<string, string>;
  priority?: number;
  group?: string;
}

/** 0.1.0's consumer options (those the tests set). */
export interface ReleaseHandlerOptions {
  concurrency?: number;
  batchSize?: number;
  leaseMs?: number;
  maxAttempts?: number;
  backoff?: { type: 'fixed'; delayMs: number };
}

/** 0.1.0's `MessageContext` (the fields the tests read). */
export interface ReleaseContext {
  id: string;
  attempt: number;
  maxAttempts: number;
  headers: Record<string, string>;
  enqueuedAt: number;
  group: string | undefined;
}

/** 0.1.0's `ReservedMessage`. */
export interface ReleaseReserved extends Omit<ReleaseContext, 'group'> {
  group?: string;
  topic: string;
  payload: unknown;
  token: string;
  leaseDeadline: number;
}

/** 0.1.0's `MessageInfo` (the fields the tests read). */
export interface ReleaseMessageInfo {
  id: string;
  state: string;
  payload: unknown;
  headers: Record<string, string>;
  attempt: number;
  maxAttempts: number;
  enqueuedAt: number | undefined;
  dueAt?: number;
  priority?: number;
  group?: string;
  result?: unknown;
}

/** 0.1.0's `DeadLetter`. */
export interface ReleaseDeadLetter {
  id: string;
  reason: string;
  error: string | null;
  attempt: number;
  payload: unknown;
  headers: Record<string, string>;
}

/** 0.1.0's service options (those the tests set). */
export interface ReleaseServiceOptions {
  connection: string;
  logLevel?: 'silent' | 'error' | 'warn' | 'log';
  keepCompleted?: boolean;
  topics?: Record<string, { partitions?: number }>;
}

/**
 * The previous release's build for one test file: unpacked from its committed tarball into a temporary
 * folder before the file (no git history needed, as on CI's clone), loaded with `require` of its
 * `dist/index.js`; its peers (ioredis, @nestjs/*) and dependencies resolve from this repository's
 * node_modules, linked into the folder. Its services are closed and the folder removed after the file.
 */
export function usePreviousRelease(release = PREVIOUS_RELEASE) {
  let folder = '';
  let build: { RedisAckQueueService: new (options: ReleaseServiceOptions) => ReleaseQueueService } | undefined;
  const services: ReleaseQueueService[] = [];
  const handle = {
    version: release.version,
    servesCurrentGroups: release.servesCurrentGroups,
    /** The version the unpacked build says it is (its package.json). */
    loadedVersion: '',
    /** A connected service of the old build; closed after the file (unless the test closed it). */
    async service(options: ReleaseServiceOptions): Promise<ReleaseQueueService> {
      const service = new build!.RedisAckQueueService(options);
      services.push(service);
      await service.connect();
      return service;
    },
  };
  beforeAll(() => {
    const root = join(__dirname, '../../..');
    folder = mkdtempSync(join(tmpdir(), `ackq-release-${release.version}-`));
    execFileSync('tar', ['-xzf', join(__dirname, '../releases', release.tarball), '-C', folder]);
    const unpacked = join(folder, 'package');
    symlinkSync(join(root, 'node_modules'), join(unpacked, 'node_modules'), 'dir');
    handle.loadedVersion = (
      JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as { version: string }
    ).version;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the old build is loaded by path, at run time
    build = require(join(unpacked, 'dist/index.js')) as typeof build;
  });
  afterAll(async () => {
    await Promise.all(services.map((service) => service.close(0)));
    if (folder) rmSync(folder, { recursive: true, force: true });
  });
  return handle;
}
