import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import { BaseRpcExceptionFilter } from '@nestjs/microservices';
import { type Observable, throwError } from 'rxjs';
import { refusalDetail } from '../nest/handler-pipeline';
import { RedisAckQueueRejectException } from './redis-ack-queue-reject.exception';

/**
 * Makes a client error final on {@link RedisAckQueueServer}: an `HttpException` of status 4xx
 * (`ValidationPipe`'s and the built-in pipes' `BadRequestException`, a guard's
 * `UnauthorizedException`, a handler's `NotFoundException`) becomes a
 * {@link RedisAckQueueRejectException}, so the message is dead-lettered at once as `rejected`
 * and a `send()` caller gets `{ status: 'error', message }` with the pipe's findings. Other
 * errors (a 5xx, an `Error`) go to Nest's default handling: a failed delivery, retried.
 *
 * Nest's exception layer turns every error that is not an `RpcException` into "Internal server
 * error" before a transport sees it, so the transport cannot tell a refused payload from a
 * crash by itself: this filter is the one line that tells it. Register it on the microservice
 * (not on an HTTP app: it answers the RPC way).
 * @example
 * ```ts
 * const app = await NestFactory.createMicroservice(AppModule, { strategy: new RedisAckQueueServer() });
 * app.useGlobalFilters(new RedisAckQueueRefusalFilter());
 * ```
 */
@Catch(HttpException)
export class RedisAckQueueRefusalFilter implements ExceptionFilter<HttpException> {
  private readonly nestDefault = new BaseRpcExceptionFilter<HttpException>();

  /** A 4xx becomes a refusal; anything else is handled as Nest's default filter does. */
  catch(exception: HttpException, host: ArgumentsHost): Observable<unknown> {
    const status = exception.getStatus();
    if (status < 400 || status > 499) return this.nestDefault.catch(exception, host);
    return throwError(() => new RedisAckQueueRejectException(refusalDetail(exception)));
  }
}
