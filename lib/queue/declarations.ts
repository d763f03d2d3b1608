import { InvalidOptionError } from '../errors';
import { errorSummary } from '../errors/error-text';
import type { ScheduleDefinition, ScheduleInfo, ScheduleOptions, TopicLimits } from '../interfaces';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { QueueCore } from './queue-core';

/** What the declarations need of the rest of the service. */
export interface DeclarationSources {
  /** Upserts one schedule, as upsertSchedule() does, marked as declared by code. */
  declareSchedule(topic: string, name: string, options: ScheduleOptions): Promise<ScheduleInfo>;
  /** Removes the schedules declared by code whose `<topic>\0<name>` is not kept; resolves how many. */
  withdrawSchedules(kept: ReadonlySet<string>): Promise<number>;
  /** The limits the running consumers wrote when they started, by topic. */
  consumerLimits(): ReadonlyMap<string, TopicLimits>;
  /** Redis lost the prefix's data (its id counter too): ids start from a number issued again. */
  renewIds(): void;
}

/**
 * What this process declared in code, kept so it can be declared again when Redis comes back
 * without this prefix's data (a restart without persistence, a failover to a replica that did
 * not have it): the schedules given to declareSchedules() (the module's `schedules` option),
 * the fleet-wide limits its consumers wrote, and the topics it recorded in the registry. It
 * watches from connect(): each reconnect reads the prefix's data marker, and on a loss declares
 * everything again and warns once. Messages, dead letters and pauses lost with the data are
 * not this library's to restore.
 */
export class QueueDeclarations {
  /** The declared schedules, by `<topic>\0<name>` (a later declaration of one replaces it). */
  private readonly schedules = new Map<string, ScheduleDefinition>();
  private checking: Promise<void> | undefined;
  /** A reconnect came while a check ran: check once more after it. */
  private recheck = false;
  /** A loss was found but declaring again failed: the next reconnect declares again. */
  private pending = false;

  constructor(
    private readonly core: QueueCore,
    private readonly sources: DeclarationSources,
  ) {
    core.connection.onReconnect(() => void this.check());
  }

  /**
   * Upserts each schedule in order, and keeps it to upsert again after a loss of Redis' data;
   * then removes the schedules declared by code before that this service does not declare
   * (what code declares, code withdraws; those upserted by hand stay).
   */
  async declareSchedules(definitions: ScheduleDefinition[]): Promise<ScheduleInfo[]> {
    this.core.assertOpen('declare schedules');
    if (!Array.isArray(definitions))
      throw new InvalidOptionError('schedules', definitions, 'an array of { topic, name, cron | everyMs, ... }');
    const declared: ScheduleInfo[] = [];
    for (const definition of definitions) {
      if (typeof definition !== 'object' || definition === null)
        throw new InvalidOptionError('schedules', definition, 'an object { topic, name, cron | everyMs, ... }');
      const { topic, name, ...options } = definition;
      declared.push(await this.sources.declareSchedule(topic, name, options));
      this.schedules.set(`${topic}\0${name}`, definition);
    }
    const withdrawn = await this.sources.withdrawSchedules(new Set(this.schedules.keys()));
    if (withdrawn > 0) this.core.logger.log(MESSAGES.schedulesWithdrawn(this.core.settings.prefix, withdrawn));
    return declared;
  }

  /**
   * Starts watching for a loss of Redis' data: writes the prefix's marker (once connected). A
   * marker Redis refuses (a read-only ACL user, a replica) leaves the watch off, and connect() goes on.
   */
  async watch(): Promise<void> {
    const { connection, engine } = this.core;
    await connection.within('connect', undefined, engine.marker.arm()).catch(() => undefined);
  }

  /**
   * Loads the prefix's stored format (choosing it on a fresh prefix), before watch() writes the
   * data marker that says the prefix is not fresh. Refused (a read-only ACL user, a replica), this
   * service writes JSON, which every release reads.
   */
  async loadFormat(): Promise<void> {
    const { connection, engine } = this.core;
    await connection.within('connect', undefined, engine.format.load()).catch(() => undefined);
  }

  /** One check at a time; reconnects meanwhile lead to one more. */
  private check(): Promise<void> {
    if (this.checking) {
      this.recheck = true;
      return this.checking;
    }
    this.checking = (async () => {
      do {
        this.recheck = false;
        await this.checkOnce();
      } while (this.recheck && !this.core.closing);
    })().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    const { engine, logger, connection, settings } = this.core;
    if (this.core.closing || !engine.marker.armed) return;
    try {
      if ((await engine.marker.lost()) || this.pending) {
        this.pending = true;
        this.sources.renewIds();
        const counts = await this.declareAgain();
        this.pending = false;
        logger.warn(MESSAGES.dataLost(connection.target, settings.prefix, counts));
      }
    } catch (error) {
      // Redis went away again (or refused): the next reconnect tries again.
      if (!this.core.closing) logger.warn(MESSAGES.redeclareFailed(settings.prefix, errorSummary(error)));
    }
    // An operator may have switched the stored format meanwhile. After a loss, the marker just
    // written makes the prefix JSON again until switched (an older process may be running).
    // Refused or unreachable, this service keeps the format it had.
    await engine.format.load().catch(() => undefined);
  }

  private async declareAgain(): Promise<{ schedules: number; limits: number; topics: number }> {
    const { engine } = this.core;
    const topics = await engine.recordAgain();
    const limits = this.sources.consumerLimits();
    await Promise.all([...limits].map(([topic, topicLimits]) => engine.limits.set(topic, topicLimits, 'code')));
    for (const { topic, name, ...options } of this.schedules.values())
      await this.sources.declareSchedule(topic, name, options);
    return { schedules: this.schedules.size, limits: limits.size, topics };
  }
}
