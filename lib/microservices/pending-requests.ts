import type { Deserializer, WritePacket } from '@nestjs/microservices';
import { DuplicateRequestError, RequestTimeoutError } from '../errors';
import { decodeReply, type ReplyRecord, responsePackets } from './reply-wire';

/**
 * What Nest's clients do with a response when they have no deserializer: a response packet stays
 * as it is, anything else is the response. Written here because Nest 11 does not export its
 * `IncomingResponseDeserializer` from the package's entry.
 */
const RESPONSE_PACKETS: Deserializer = {
  deserialize: (value: unknown) => {
    const packet = value as Partial<WritePacket> | null | undefined;
    const isPacket =
      !!packet && (packet.err !== undefined || packet.response !== undefined || packet.isDisposed !== undefined);
    return isPacket
      ? packet
      : { id: (packet as { id?: string } | null | undefined)?.id, response: value, isDisposed: true };
  },
};

/**
 * How a caller's requests reach Redis: taking a reply, opening one its topic's codec sealed,
 * marking one heard whole as taken, cancelling a request nobody waits for.
 */
export interface RequestChannel {
  take(topic: string, request: { id: string; group?: string }): Promise<string | undefined>;
  /** A reply's text as stored or published, opened when sealed (a PayloadDecodeError when it cannot be). */
  open(topic: string, text: string): Promise<string>;
  markTaken(topic: string, request: { id: string; group?: string }): Promise<void>;
  cancel(topic: string, id: string): Promise<unknown>;
}

/** Requests waiting this long are looked for now and then, in case their notice was missed. */
const SWEEP_AFTER_MS = 2_000;
const SWEEP_EVERY_MS = 2_000;

/** One `send` waiting for its reply. */
class PendingRequest {
  settled = false;
  readonly sentAt = Date.now();
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly topic: string,
    readonly id: string,
    readonly group: string | undefined,
    readonly deliver: (packet: WritePacket) => void,
  ) {}
}

/**
 * The requests of one client that wait for their replies, by id. A reply comes whole on the
 * inline channel (then it is marked taken in Redis, off the caller's path), or is taken once
 * when its id's notice arrives (or a sweep finds it: after a reconnect, and every 2 s for
 * requests older than 2 s), and handed to the caller as Nest's client expects: each value, then
 * completion, or the error. The first reply wins; a request settled (answered, timed out,
 * abandoned) hears nothing more. With a `deserializer` (or for the response packets of a
 * server's `serializer`), each packet goes through it, as Nest's clients read theirs.
 */
export class PendingRequests {
  private readonly byId = new Map<string, PendingRequest>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly channel: RequestChannel,
    private readonly deserializer?: Deserializer,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  /**
   * Waits for the reply of a request about to be pushed: the caller errors with a
   * RequestTimeoutError after `timeoutMs`. Returns `stop`, what the caller calls when it
   * stops listening (a request not answered by then is cancelled), and `fail`, which ends
   * this request with an error (its push failed) and cancels nothing.
   * @throws {DuplicateRequestError} when a request of the same id still waits: an id is one
   * caller's, whose reply and cancel it keeps.
   */
  add(
    topic: string,
    request: { id: string; group?: string },
    timeoutMs: number,
    deliver: (packet: WritePacket) => void,
  ): { stop: () => void; fail: (error: unknown) => void } {
    if (this.byId.has(request.id)) throw new DuplicateRequestError(topic, request.id);
    const pending = new PendingRequest(topic, request.id, request.group, deliver);
    this.byId.set(request.id, pending);
    pending.timer = setTimeout(
      () => this.abandon(pending, new RequestTimeoutError(topic, request.id, timeoutMs)),
      timeoutMs,
    );
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_EVERY_MS).unref();
    return { stop: () => this.abandon(pending), fail: (error) => this.settle(pending, { err: error }) };
  }

  /** A notice: the request's reply is stored. */
  answered(id: string): void {
    const pending = this.byId.get(id);
    if (pending) void this.collect(pending);
  }

  /**
   * A whole reply: handed to its caller, then marked taken (a redelivered request still finds it
   * answered). A text this package did not write is left to be taken.
   */
  replied(id: string, text: string): void {
    const pending = this.byId.get(id);
    if (!pending) return;
    void this.opened(pending, text).then((reply) => {
      if (reply === null) return;
      if (!reply) return void this.collect(pending);
      this.channel.markTaken(pending.topic, pending).catch(() => undefined); // else it expires with its TTL
      return this.deliver(pending, reply);
    });
  }

  /** Looks for the replies of every waiting request (after a reconnect, when notices may have been missed). */
  sweepAll(): void {
    for (const pending of this.byId.values()) void this.collect(pending);
  }

  /** Ends every waiting request with `error` (the client closes). */
  failAll(error: unknown): void {
    for (const pending of [...this.byId.values()]) this.settle(pending, { err: error });
  }

  private sweep(): void {
    const before = Date.now() - SWEEP_AFTER_MS;
    for (const pending of this.byId.values()) if (pending.sentAt <= before) void this.collect(pending);
  }

  private async collect(pending: PendingRequest): Promise<void> {
    let text: string | undefined;
    try {
      text = await this.channel.take(pending.topic, pending);
    } catch {
      return; // Redis unreachable: the next notice, sweep or the timeout settles it.
    }
    const reply = text === undefined ? undefined : await this.opened(pending, text);
    if (reply) await this.deliver(pending, reply);
  }

  /**
   * A reply's record, opened first when its topic's codec sealed it; undefined for a text this
   * package did not write; null when it could not be opened (the request then ends with the
   * PayloadDecodeError: this process lacks the codec or its key).
   */
  private async opened(pending: PendingRequest, text: string): Promise<ReplyRecord | undefined | null> {
    let json: string;
    try {
      json = await this.channel.open(pending.topic, text);
    } catch (error) {
      this.settle(pending, { err: error });
      return null;
    }
    return decodeReply(json);
  }

  /** Settles the request and hands its caller the reply (the first one only). */
  private async deliver(pending: PendingRequest, reply: ReplyRecord): Promise<void> {
    if (pending.settled) return;
    this.settle(pending, undefined);
    let packets: WritePacket[];
    try {
      packets = await this.packetsOf(reply, pending.id);
    } catch (error) {
      packets = [{ err: error }];
    }
    for (const packet of packets) pending.deliver(packet);
  }

  /** What the caller's observer receives of a reply: each value, then completion; or the error. */
  private async packetsOf(reply: ReplyRecord, id: string): Promise<WritePacket[]> {
    if ('packets' in reply) return this.deserialize(reply.packets, this.deserializer ?? RESPONSE_PACKETS);
    if (this.deserializer) return this.deserialize(responsePackets(reply, id), this.deserializer);
    if ('error' in reply) return [{ err: reply.error ?? { status: 'error', message: 'null' } }];
    return [...reply.values.map((response) => ({ response })), { isDisposed: true, response: undefined }];
  }

  /** Response packets read as Nest's clients read theirs: up to the one that disposes (or errs). */
  private async deserialize(packets: unknown[], deserializer: Deserializer): Promise<WritePacket[]> {
    const read: WritePacket[] = [];
    for (const each of packets) {
      const packet = (await deserializer.deserialize(each)) as WritePacket<unknown>;
      const { err, response, isDisposed } = packet as { err?: unknown; response?: unknown; isDisposed?: boolean };
      if (isDisposed || err) return [...read, { err, response, isDisposed: true }];
      read.push({ err, response });
    }
    return [...read, { isDisposed: true, response: undefined }];
  }

  /** Stops waiting; a request not answered is cancelled (it may still wait, or run). */
  private abandon(pending: PendingRequest, error?: Error): void {
    if (pending.settled) return;
    this.settle(pending, error && { err: error });
    this.channel.cancel(pending.topic, pending.id).catch(() => undefined);
  }

  private settle(pending: PendingRequest, last: WritePacket | undefined): void {
    if (pending.settled) return;
    pending.settled = true;
    clearTimeout(pending.timer);
    if (this.byId.get(pending.id) === pending) this.byId.delete(pending.id);
    if (this.byId.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
    if (last) pending.deliver(last);
  }
}
