import { Body, Controller, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { Client, ClientProxy, EventPattern, MessagePattern, RpcException } from '@nestjs/microservices';
import { from, lastValueFrom, type Observable, of } from 'rxjs';
import { scan } from 'rxjs/operators';
import { E2E_CLIENT } from './e2e-client';

/**
 * Mirrors nestjs/nest integration/microservices/src/app.controller.ts (the version
 * global-config-applied.spec.ts runs): routes that call this app's handlers through three
 * clients (`@Client`, a `useFactory` and a `useClass` registration).
 */
@Controller()
export class AppController {
  static IS_NOTIFIED = false;

  @Client(E2E_CLIENT)
  client!: ClientProxy;

  constructor(
    @Inject('USE_CLASS_CLIENT') private readonly useClassClient: ClientProxy,
    @Inject('USE_FACTORY_CLIENT') private readonly useFactoryClient: ClientProxy,
  ) {}

  @Post()
  @HttpCode(200)
  call(@Query('command') cmd: string, @Body() data: number[]): Observable<number> {
    return this.client.send<number>({ cmd }, data);
  }

  @Post('useFactory')
  @HttpCode(200)
  callWithClientUseFactory(@Query('command') cmd: string, @Body() data: number[]): Observable<number> {
    return this.useFactoryClient.send<number>({ cmd }, data);
  }

  @Post('useClass')
  @HttpCode(200)
  callWithClientUseClass(@Query('command') cmd: string, @Body() data: number[]): Observable<number> {
    return this.useClassClient.send<number>({ cmd }, data);
  }

  @Post('stream')
  @HttpCode(200)
  stream(@Body() data: number[]): Observable<number> {
    return this.client.send<number>({ cmd: 'streaming' }, data).pipe(scan((a, b) => a + b));
  }

  @Post('concurrent')
  @HttpCode(200)
  concurrent(@Body() data: number[][]): Promise<boolean> {
    const send = async (tab: number[]) => {
      const expected = tab.reduce((a, b) => a + b);
      return (await lastValueFrom(this.client.send<number>({ cmd: 'sum' }, tab))) === expected;
    };
    return data.map(async (tab) => send(tab)).reduce(async (a, b) => (await a) && (await b));
  }

  @MessagePattern({ cmd: 'sum' })
  sum(data: number[]): number {
    return (data || []).reduce((a, b) => a + b);
  }

  @MessagePattern({ cmd: 'exception' })
  exception(data: unknown): never {
    throw new RpcException({ data });
  }

  @MessagePattern({ cmd: 'asyncSum' })
  async asyncSum(data: number[]): Promise<number> {
    await Promise.resolve();
    return (data || []).reduce((a, b) => a + b);
  }

  @MessagePattern({ cmd: 'streamSum' })
  streamSum(data: number[]): Observable<number> {
    return of((data || []).reduce((a, b) => a + b));
  }

  @MessagePattern({ cmd: 'streaming' })
  streaming(data: number[]): Observable<number> {
    return from(data);
  }

  @Post('notify')
  sendNotification(): Observable<unknown> {
    return this.client.emit<number>('notification', true);
  }

  @EventPattern('notification')
  eventHandler(data: boolean) {
    AppController.IS_NOTIFIED = data;
  }
}
