import { type CanActivate, Injectable, Module, UseGuards } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule, DiscoveryService, ModuleRef } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { MessageContext } from '../../lib';
import * as pipeline from '../../lib/nest/handler-pipeline';
import { bindQueueHandler } from '../../lib/nest/queue-handler.binder';

const RESULT = { sentinel: true };
const context = { id: 'm1', topic: 't', attempt: 1 } as MessageContext;

@Injectable()
class AllowGuard implements CanActivate {
  canActivate() {
    return true;
  }
}

@Injectable()
class Handlers {
  plain(payload: unknown, _context: MessageContext) {
    return payload === 'x' && this instanceof Handlers ? RESULT : undefined;
  }

  @UseGuards(AllowGuard)
  guarded() {
    return RESULT;
  }
}

async function binderFor(extraProviders: object[] = []) {
  @Injectable()
  class Probe {
    constructor(
      readonly moduleRef: ModuleRef,
      readonly discovery: DiscoveryService,
    ) {}
  }
  @Module({ imports: [DiscoveryModule], providers: [Handlers, AllowGuard, Probe, ...(extraProviders as never[])] })
  class Root {}
  const app = await Test.createTestingModule({ imports: [Root] }).compile();
  await app.init();
  const { moduleRef, discovery } = app.get(Probe);
  const wrapper = discovery.getProviders().find((w) => w.metatype === Handlers)!;
  return { app, bind: (method: string) => bindQueueHandler(moduleRef, wrapper, method) };
}

describe('bindQueueHandler: a handler without enhancers is called directly', () => {
  let spy: jest.SpyInstance;
  beforeEach(() => (spy = jest.spyOn(pipeline, 'createHandlerPipeline')));
  afterEach(() => spy.mockRestore());

  it('calls a method without guards, interceptors, pipes or filters as it is: no pipeline, no promise added', async () => {
    const { app, bind } = await binderFor();
    const handler = bind('plain');
    expect(spy).not.toHaveBeenCalled();
    // The method's own return value, synchronously: nothing wraps the call.
    expect(handler('x', context)).toBe(RESULT);
    await app.close();
  });

  it('runs a method with an enhancer of its own through the pipeline', async () => {
    const { app, bind } = await binderFor();
    const handler = bind('guarded');
    expect(spy).toHaveBeenCalledTimes(1);
    const outcome = handler('x', context);
    expect(outcome).toBeInstanceOf(Promise);
    await expect(outcome).resolves.toBe(RESULT);
    await app.close();
  });

  it('runs every method through the pipeline once an app-wide enhancer exists (APP_GUARD)', async () => {
    const { app, bind } = await binderFor([{ provide: APP_GUARD, useClass: AllowGuard }]);
    const handler = bind('plain');
    expect(spy).toHaveBeenCalledTimes(1);
    await expect(handler('x', context)).resolves.toBe(RESULT);
    await app.close();
  });
});
