import { Controller, Get } from '@nestjs/common';
import { Client, ClientProxy, MessagePattern } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import { scan, take } from 'rxjs/operators';
import { E2E_CLIENT } from './e2e-client';

/** Mirrors nestjs/nest integration/microservices/src/redis/redis-broadcast.controller.ts, over this transport. */
@Controller()
export class RedisBroadcastController {
  /** How many times a server ran the handler (Nest's controller does not count). */
  static handled = 0;

  @Client(E2E_CLIENT)
  client!: ClientProxy;

  @Get('broadcast')
  broadcast() {
    return this.client.send<number>({ cmd: 'broadcast' }, {}).pipe(
      scan((a, b) => a + b),
      take(2),
    );
  }

  @MessagePattern({ cmd: 'broadcast' })
  replyBroadcast(): Observable<number> {
    RedisBroadcastController.handled += 1;
    // Divergence: Nest's handler never completes (observer.next(1) alone); this transport
    // stores a request's values when its Observable completes, so an endless one never answers.
    return new Observable((observer) => {
      observer.next(1);
      observer.complete();
    });
  }
}
