import { Body, Controller, HttpCode, Post, Query } from '@nestjs/common';
import { Client, ClientProxy, EventPattern, MessagePattern } from '@nestjs/microservices';
import { from, lastValueFrom, type Observable, of } from 'rxjs';
import { scan } from 'rxjs/operators';
import { E2E_CLIENT } from './e2e-client';

/**
 * Mirrors nestjs/nest integration/microservices/src/redis/redis.controller.ts: the HTTP routes
 * call the handlers of the same app through the client, over this transport.
 */
@Controller()
export class RedisController {
  static IS_NOTIFIED = false;

  @Client(E2E_CLIENT)
  client!: ClientProxy;

  @Post()
  @HttpCode(200)
  call(@Query('command') cmd: string, @Body() data: number[]): Observable<number> {
    return this.client.send<number>({ cmd }, data);
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
      const result = await lastValueFrom(this.client.send<number>({ cmd: 'sum' }, tab));
      return result === expected;
    };
    // Every request is in flight before the first answer is read.
    return data.map(async (tab) => send(tab)).reduce(async (a, b) => (await a) && (await b));
  }

  @MessagePattern({ cmd: 'sum' })
  sum(data: number[]): number {
    return (data || []).reduce((a, b) => a + b);
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
    RedisController.IS_NOTIFIED = data;
  }
}
