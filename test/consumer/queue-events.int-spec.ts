import { Controller, Injectable, Module, Scope, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { NestFactory } from '@nestjs/core';
import {
  InvalidQueueListenerError,
  OnQueueEvent,
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
  type RedisAckQueueEvent,
  type RedisAckQueueEventType,
} from '../../lib';
import { expectLogs, loggedLines, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const WATCHED = uniqueTopic('events.watched');
const OTHER = uniqueTopic('events.other');
const FOUND = uniqueTopic('events.found');
const heard: Record<string, RedisAckQueueEvent[]> = {};
const hear = (name: string, event: RedisAckQueueEvent) => (heard[name] ??= []).push(event);

@Injectable()
class Handlers {
  @QueueHandler(WATCHED, { maxAttempts: 1 })
  watched(payload: { fail?: boolean }) {
    if (payload.fail) throw new Error('watched failed');
  }

  @QueueHandler(OTHER, { maxAttempts: 1 })
  other(payload: { fail?: boolean }) {
    if (payload.fail) throw new Error('other failed');
  }
}

@Injectable()
class Listeners {
  @OnQueueEvent('dead')
  onAnyDead(event: RedisAckQueueEvent) {
    hear('dead', event);
  }

  @OnQueueEvent('acked', { topic: WATCHED })
  onWatchedAcked(event: RedisAckQueueEvent) {
    hear('watched acked', event);
  }

  @OnQueueEvent('pushed', { topic: WATCHED })
  throwing(event: RedisAckQueueEvent) {
    hear('throwing', event);
    throw new Error('this listener always throws');
  }

  @OnQueueEvent('pushed', { topic: OTHER })
  async rejecting(event: RedisAckQueueEvent) {
    hear('rejecting', event);
    await Promise.resolve();
    throw new Error('this listener always rejects');
  }
}

let scopedSerial = 0;
@Injectable({ scope: Scope.REQUEST })
class ScopedListener {
  readonly serial = ++scopedSerial;

  @OnQueueEvent('acked', { topic: OTHER })
  onOtherAcked(event: RedisAckQueueEvent) {
    hear('scoped', event);
    void this.serial;
  }
}

@Injectable()
class FoundHandler {
  @QueueHandler(FOUND)
  handle() {}
}

@Controller()
class ListeningController {
  @OnQueueEvent('acked', { topic: FOUND })
  onAcked(event: RedisAckQueueEvent) {
    hear('controller', event);
  }
}

/** A plain provider: found before the change too, it marks when the event was delivered. */
@Injectable()
class PlainListener {
  @OnQueueEvent('acked', { topic: FOUND })
  onAcked(event: RedisAckQueueEvent) {
    hear('plain', event);
  }
}

/** Built by a factory, registered under its class. */
class FactoryListener {
  constructor(private readonly label: string) {}

  @OnQueueEvent('acked', { topic: FOUND })
  onAcked(event: RedisAckQueueEvent) {
    hear(this.label, event);
  }
}

/** Replaced in a TestingModule by a mock. */
@Injectable()
class ReplacedListener {
  @OnQueueEvent('acked', { topic: FOUND })
  onAcked(event: RedisAckQueueEvent) {
    hear('replaced, real', event);
  }
}

describe('@OnQueueEvent: provider methods called with the events of events$', () => {
  const fx = useRedis();
  const apps: INestApplicationContext[] = [];

  async function boot(providers: object[]) {
    @Module({
      imports: [RedisAckQueueModule.forRoot({ connection: fx.connection, backoff: { type: 'fixed', delayMs: 10 } })],
      providers: providers as never[],
    })
    class Root {}
    const app = await NestFactory.createApplicationContext(Root, { logger: testLogger(), abortOnError: false });
    apps.push(app);
    return app;
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it('calls listeners by event type, filtered by topic when asked, request-scoped ones per event', async () => {
    expectLogs(/went to the dead letters/, /listener Listeners\.(throwing|rejecting) threw/);
    const app = await boot([Handlers, Listeners, ScopedListener]);
    const queue = app.get(RedisAckQueueService);
    const ok = await queue.push(WATCHED, { fail: false });
    const bad = await queue.push(WATCHED, { fail: true });
    const otherOk = await queue.push(OTHER, { fail: false });
    const otherBad = await queue.push(OTHER, { fail: true });
    await eventually(
      () => heard.dead?.length === 2 && heard['watched acked']?.length === 1 && heard.scoped?.length === 1,
    );
    await queue.waitUntilIdle(WATCHED);
    await queue.waitUntilIdle(OTHER);
    // Every topic's dead letters; only WATCHED's acks.
    expect(heard.dead.map((e) => [e.topic, e.id, e.error?.message]).sort()).toEqual(
      [
        [WATCHED, bad.id, 'watched failed'],
        [OTHER, otherBad.id, 'other failed'],
      ].sort(),
    );
    expect(heard['watched acked'].map((e) => [e.type, e.topic, e.id])).toEqual([['acked', WATCHED, ok.id]]);
    expect(heard.scoped.map((e) => [e.type, e.id])).toEqual([['acked', otherOk.id]]);
  });

  it('logs a listener that throws or rejects, and the stream goes on for it and the others', async () => {
    // The app of the previous test still runs; its throwing listeners have thrown on two pushes each.
    expect(heard.throwing).toHaveLength(2);
    expect(heard.rejecting).toHaveLength(2);
    expectLogs(/listener Listeners\.(throwing|rejecting) threw/);
    const queue = apps[0].get(RedisAckQueueService);
    await queue.push(WATCHED, { fail: false });
    await queue.push(OTHER, { fail: false });
    await eventually(
      () => heard.throwing.length === 3 && heard.rejecting.length === 3 && heard['watched acked'].length === 2,
    );
    await eventually(() => loggedLines(/threw/).length === 2);
    expect(
      loggedLines(/threw/)
        .map((l) => [l.level, l.message])
        .sort(),
    ).toEqual(
      [
        [
          'error',
          `The @OnQueueEvent('pushed') listener Listeners.rejecting threw on an event of "${OTHER}": Error: this listener always rejects`,
        ],
        [
          'error',
          `The @OnQueueEvent('pushed') listener Listeners.throwing threw on an event of "${WATCHED}": Error: this listener always throws`,
        ],
      ].sort(),
    );
  });

  it('calls listeners on controllers, on factory providers and on a test replacement, as handlers are found', async () => {
    const onAcked = jest.fn((event: RedisAckQueueEvent) => hear('replaced, mock', event));
    const testing = await Test.createTestingModule({
      imports: [RedisAckQueueModule.forRoot({ connection: fx.connection })],
      providers: [
        FoundHandler,
        PlainListener,
        { provide: FactoryListener, useFactory: () => new FactoryListener('factory') },
        ReplacedListener,
      ],
      controllers: [ListeningController],
    })
      .setLogger(testLogger())
      .overrideProvider(ReplacedListener)
      .useValue({ onAcked })
      .compile();
    // Closed here, not after the file: its consumer's scheduler would outlive the server and retry.
    const app = await testing.init();
    try {
      await expectEveryListenerCalled(app);
    } finally {
      await app.close();
    }
  });

  async function expectEveryListenerCalled(app: INestApplicationContext) {
    const queue = app.get(RedisAckQueueService);
    const { id } = await queue.push(FOUND, {});
    // Listeners of a provider built once are called in turn on each event: when one has it, all have.
    await eventually(() => heard.plain?.length === 1);
    const calls = (name: string) => heard[name]?.map((e) => [e.type, e.id]);
    expect({
      controller: calls('controller'),
      factory: calls('factory'),
      mock: calls('replaced, mock'),
      real: calls('replaced, real'),
    }).toEqual({ controller: [['acked', id]], factory: [['acked', id]], mock: [['acked', id]], real: undefined });
  }

  it('leaves out a listener whose replacement lacks its method, and starts', async () => {
    const testing = await Test.createTestingModule({
      imports: [RedisAckQueueModule.forRoot({ connection: fx.connection })],
      providers: [ReplacedListener],
    })
      .setLogger(testLogger())
      .overrideProvider(ReplacedListener)
      .useValue({})
      .compile();
    // Startup does not fail (as it would for a @QueueHandler): the mock leaves the listener out on purpose.
    apps.push(await testing.init());
  });

  it('retried and dead events carry the wait of their own delivery, after the first attempt too', async () => {
    expectLogs(/went to the dead letters/, /retrying in/);
    const backoffMs = 1_500;
    const queue = await fx.service({ backoff: { type: 'fixed', delayMs: backoffMs } });
    const topic = uniqueTopic('events.waits');
    const events: RedisAckQueueEvent[] = [];
    const subscription = queue.events$.subscribe((event) => {
      if (event.topic === topic && (event.type === 'retried' || event.type === 'dead')) events.push(event);
    });
    const consumer = queue.consume(
      topic,
      () => {
        throw new Error('always fails');
      },
      { maxAttempts: 3 },
    );
    await queue.push(topic, 'doomed');
    await eventually(() => events.some((event) => event.type === 'dead'), 20_000);
    await consumer.close();
    subscription.unsubscribe();
    expect(events.map((e) => [e.type, e.attempt])).toEqual([
      ['retried', 1],
      ['retried', 2],
      ['dead', 3],
    ]);
    for (const event of events) {
      expect(event.durationMs).toEqual(expect.any(Number));
      expect(event.waitMs).toEqual(expect.any(Number));
      // From the retry's due time, not from the push: the backoff before it is not a wait.
      expect(event.waitMs).toBeLessThan(backoffMs);
    }
  });

  it('dates the delivery after an expired lease from the deadline of that lease', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic('events.expired');
    await queue.push(topic, 'abandoned');
    const [first] = await queue.reserve(topic, { leaseMs: 50 });
    expect(first.dueAt).toBeUndefined();
    const second = await eventually(async () => (await queue.reserve(topic))[0]);
    expect(second.attempt).toBe(2);
    expect(second.dueAt).toBe(first.leaseDeadline);
  });

  it('fails startup on an unknown event type, a bad topic or an unknown queue, naming the method', async () => {
    @Injectable()
    class BadType {
      @OnQueueEvent('finished' as RedisAckQueueEventType)
      on() {}
    }
    await expect(boot([BadType])).rejects.toThrow(InvalidQueueListenerError);
    await expect(boot([BadType])).rejects.toThrow(
      /Invalid @OnQueueEvent on BadType\.on: unknown event type "finished": use one of pushed, reserved/,
    );
    @Injectable()
    class BadTopic {
      @OnQueueEvent('dead', { topic: 'not valid' })
      on() {}
    }
    await expect(boot([BadTopic])).rejects.toThrow(/Invalid @OnQueueEvent on BadTopic\.on: Invalid topic "not valid"/);
    @Injectable()
    class BadQueue {
      @OnQueueEvent('dead', { queue: 'billing' })
      on() {}
    }
    await expect(boot([BadQueue])).rejects.toThrow(/Invalid @OnQueueEvent on BadQueue\.on: no queue named "billing"/);
  });
});
