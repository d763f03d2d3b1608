import { Body, Controller, InternalServerErrorException, Post, RequestTimeoutException } from '@nestjs/common';
import { ClientProxyFactory } from '@nestjs/microservices';
import { type Observable, throwError } from 'rxjs';
import { catchError, finalize } from 'rxjs/operators';
import { RedisAckQueueClient, type RedisAckQueueClientOptions } from '../../../../lib/microservices';

/**
 * Mirrors nestjs/nest integration/microservices/src/disconnected.controller.ts: a client made
 * per call from the posted options, for a server that is not there.
 */
@Controller()
export class DisconnectedClientController {
  @Post()
  call(@Body() options: RedisAckQueueClientOptions): Observable<number> {
    const client = ClientProxyFactory.create({ customClass: RedisAckQueueClient, options });
    return client.send<number, number[]>({ cmd: 'none' }, [1, 2, 3]).pipe(
      catchError((error: { code?: string } | undefined) => {
        const { code } = error || { code: 'CONN_ERR' };
        // Divergence: this transport fails with REDIS_CONNECTION (once connectTimeoutMs has
        // passed) where Nest's fail with ECONNREFUSED: mapped to the same 408.
        return throwError(() =>
          code === 'ECONNREFUSED' || code === 'CONN_ERR' || code === 'REDIS_CONNECTION'
            ? new RequestTimeoutException('ECONNREFUSED')
            : new InternalServerErrorException(),
        );
      }),
      // Nest's controller leaves its client open; a client retrying a closed port would outlive the test.
      finalize(() => void client.close()),
    );
  }
}
