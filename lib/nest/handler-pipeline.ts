import { type CanActivate, ForbiddenException, HttpException, type Type } from '@nestjs/common';
import { isObservable, lastValueFrom } from 'rxjs';
import { MessageRejectedError, QueueGuardError } from '../errors';
import { asError } from '../errors/error-text';
import type { MessageContext, QueueHandlerFn } from '../interfaces';
import { REDIS_ACK_QUEUE_CONTEXT_TYPE } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { EnhancerSet, HandlerEnhancers } from './handler-enhancers';
import { ExecutionContextHost, FORBIDDEN_MESSAGE } from './nest-internals';

type Handler = (...args: unknown[]) => unknown;

/** The provider method a pipeline runs. */
export interface PipelineTarget {
  instance: object;
  /** The method as the class declares it: its enhancer metadata hangs on it. */
  method: Handler;
  /** The payload parameter's declared type, which a ValidationPipe validates against. */
  metatype: Type | undefined;
}

/**
 * Runs a handler through its enhancers in Nest's order: guards, interceptors around pipes
 * and the method. The pipes see the payload (`metadata.type` 'body'); the MessageContext
 * reaches the method as it is. A guard that denies and a pipe that throws end in a
 * MessageRejectedError, a guard that throws in a QueueGuardError (one too), so the message
 * is dead-lettered at once as `rejected`, with a text that names the guard; any other error
 * fails the delivery as usual. Exception filters see every error, and whatever
 * they do the delivery still fails with the original error: a filter cannot ack a message.
 */
export function createHandlerPipeline(
  target: PipelineTarget,
  set: EnhancerSet,
  enhancers: HandlerEnhancers,
): QueueHandlerFn {
  const { instance, method, metatype } = target;
  return async (payload: unknown, context: MessageContext) => {
    const args = [payload, context];
    let refusedBy: 'guard' | 'pipe' | undefined;
    /** The guard running, and whether it returned false (else it threw). */
    let guard = '';
    let denied = false;
    try {
      refusedBy = 'guard';
      // One at a time, in Nest's order, so that a refusal can name its guard.
      for (const each of set.guards) {
        guard = guardName(each);
        const allowed = await enhancers.guardsConsumer.tryActivate(
          [each],
          args,
          instance,
          method,
          REDIS_ACK_QUEUE_CONTEXT_TYPE,
        );
        denied = !allowed;
        if (denied) throw new ForbiddenException(FORBIDDEN_MESSAGE);
      }
      refusedBy = undefined;
      const handle = async () => {
        let value = payload;
        if (set.pipes.length > 0) {
          refusedBy = 'pipe';
          value = await enhancers.pipesConsumer.applyPipes(
            payload,
            { type: 'body', metatype, data: undefined },
            set.pipes,
          );
          refusedBy = undefined;
        }
        return method.call(instance, value, context);
      };
      const result = await enhancers.interceptorsConsumer.intercept(
        set.interceptors,
        args,
        instance,
        method,
        handle,
        REDIS_ACK_QUEUE_CONTEXT_TYPE,
      );
      return await settled(result);
    } catch (error) {
      await runFilters(set, error, args, target);
      throw refusedBy ? refusal(refusedBy === 'guard' ? { guard, denied } : undefined, error) : error;
    }
  };
}

/** A handler's outcome as a promise: an Observable succeeds when it completes (with or without values). */
export function settled(result: unknown): unknown {
  return isObservable(result) ? lastValueFrom(result, { defaultValue: undefined }) : result;
}

async function runFilters(
  set: EnhancerSet,
  error: unknown,
  args: unknown[],
  { instance, method }: PipelineTarget,
): Promise<void> {
  const host = new ExecutionContextHost(args, instance.constructor as Type, method);
  host.setType(REDIS_ACK_QUEUE_CONTEXT_TYPE);
  try {
    await set.filters.invokeCustomFilters(error, host);
  } catch {
    // A filter that rethrows (or throws another error) changes nothing: the original error stands.
  }
}

/**
 * The error a refusal ends in: a pipe's or a denying guard's is a MessageRejectedError, a
 * throwing guard's a QueueGuardError; each keeps the original as its cause.
 */
function refusal(byGuard: { guard: string; denied: boolean } | undefined, error: unknown): MessageRejectedError {
  const type = REDIS_ACK_QUEUE_CONTEXT_TYPE;
  if (!byGuard) return new MessageRejectedError(MESSAGES.pipeRefused(refusalDetail(error)), { cause: error });
  const { guard, denied } = byGuard;
  if (!denied) return new QueueGuardError(guard, type, refusalDetail(error, true), { cause: error });
  return new MessageRejectedError(MESSAGES.guardDenied(refusalDetail(error), guard, type), { cause: error });
}

/**
 * Why a guard or pipe refused, without the payload: the error's message (with its name, when
 * `named`) and, from a ValidationPipe, its findings; bounded.
 */
export function refusalDetail(error: unknown, named = false): string {
  const failure = asError(error);
  const line = failure.message.split('\n')[0];
  const summary = named ? `${failure.name}: ${line}` : line;
  const response: unknown = error instanceof HttpException ? error.getResponse() : undefined;
  const findings =
    typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : undefined;
  const strings = Array.isArray(findings) ? findings.filter((item): item is string => typeof item === 'string') : [];
  const detail = strings.length > 0 ? `${summary}: ${strings.join('; ')}` : summary;
  return detail.length > 500 ? `${detail.slice(0, 500)}...` : detail;
}

/** A guard's class name, for the texts of its refusals. */
function guardName(guard: CanActivate): string {
  const name = (guard as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : 'a guard object without a class';
}
