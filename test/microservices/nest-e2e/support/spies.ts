import type {
  ArgumentMetadata,
  ArgumentsHost,
  CallHandler,
  CanActivate,
  ExceptionFilter,
  ExecutionContext,
  NestInterceptor,
  PipeTransform,
} from '@nestjs/common';
import { EMPTY, type Observable } from 'rxjs';

/* Mirrors nestjs/nest integration/microservices/e2e/spies.ts: enhancers that record their call. */

export class SpyGuard implements CanActivate {
  called = false;

  canActivate(_context: ExecutionContext): boolean {
    this.called = true;
    return true;
  }
}

export class SpyFilter implements ExceptionFilter {
  called = false;

  catch(_exception: unknown, _host: ArgumentsHost): Observable<never> {
    this.called = true;
    return EMPTY;
  }
}

export class SpyInterceptor implements NestInterceptor {
  called = false;

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    this.called = true;
    return next.handle();
  }
}

export class SpyPipe implements PipeTransform {
  called = false;

  transform(value: unknown, _metadata: ArgumentMetadata): unknown {
    this.called = true;
    return value;
  }
}
