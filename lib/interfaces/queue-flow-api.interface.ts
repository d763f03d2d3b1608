import type { ChildFailure, FlowRef, PushOptionsBase, SealedValueInfo } from './message.interface';
import type { MessageState } from './queue-lookup-api.interface';
import type { TopicPayload } from './topic.interface';

/**
 * Options of one node of a flow: those of `push` but the key modes (a flow decides when its nodes
 * run), and what its parent does if it fails.
 */
export interface FlowNodeOptions extends PushOptionsBase {
  /**
   * What happens to the parent when this child goes to the dead letters or is cancelled:
   * `'fail'` sends the parent to the dead letters as `child-failed` (it comes back when this
   * child is requeued and acked); `'continue'` lets the parent run once its other children
   * ended, and `context.failedChildren()` lists this one. Only for a child (not the root).
   * @defaultValue `'fail'`
   */
  onChildFailure?: 'fail' | 'continue';
}

/**
 * A flow for `pushFlow`: a message, and the children that must all be acked before it runs.
 * Children may be on any topic and nest to any depth (up to 10,000 nodes in all).
 * @typeParam T - The payload's type.
 */
export interface Flow<T = unknown> {
  /** The topic of this node. */
  topic: string;
  /** Its payload (JSON data, as for `push`). */
  payload: T;
  /**
   * Its id. Give every node one when a failed `pushFlow` may be retried: the retry then finishes
   * the same flow instead of storing a second one.
   * @defaultValue a new id
   */
  id?: string;
  /** Push options of this node (delay, priority, group, headers, maxAttempts) and its `onChildFailure`. */
  options?: FlowNodeOptions;
  /** Messages that run first: this one becomes ready once every one of them was acked. */
  children?: readonly Flow[];
}

/**
 * A flow whose every node's payload is of its topic's type (`defineTopic<T>`): what `pushFlow`
 * takes, so a payload that does not fit its typed topic fails to compile. Plain string topics
 * take any payload.
 */
export type TypedFlow<F> = F extends {
  /** The node's topic, typed or plain. */
  topic: infer K;
  /** The node's children, as written. */
  children?: infer C;
}
  ? Omit<F, 'payload' | 'children'> & {
      /** The node's payload, of its topic's type. */
      payload: TopicPayload<K>;
      /** The node's children, each typed by its own topic. */
      children?: C extends readonly unknown[] ? { [I in keyof C]: TypedFlow<C[I]> } : never;
    }
  : never;

/** The ids `pushFlow` stored, as a tree. */
export interface FlowResult {
  /** The node's topic. */
  topic: string;
  /** Its id (given or made). */
  id: string;
  /**
   * True when the node existed already (a retried `pushFlow`, whose first call stored it; it may
   * have ended since): nothing of it was stored again. A root or parent stored with other
   * children than given is refused with FlowIdTakenError instead.
   */
  duplicate: boolean;
  /** Its children, in the order given. */
  children: FlowResult[];
}

/** Where a node of a flow stands (`getFlow`): a message state, or how a child that left Redis ended. */
export type FlowNodeState = MessageState | 'cancelled';

/** One node of a flow as `getFlow` reads it. */
export interface FlowNode {
  /** The node's topic. */
  topic: string;
  /** Its id. */
  id: string;
  /**
   * Where it is: a parent waits as `waiting-children`; an acked child is `completed` (its record
   * kept by its parent until the parent ends); a cancelled one is `cancelled`.
   */
  state: FlowNodeState;
  /** What its handler returned, for a child that was acked (undefined when it returned nothing). */
  result?: unknown;
  /** For a child that failed (dead letter or cancelled): why, and the error's text. */
  failure?: ChildFailure;
  /** Present when a codec sealed its result: size and key id, opened into `result` when this process can (see SealedValueInfo). */
  sealedResult?: SealedValueInfo;
  /** Its children (empty for a leaf, and for a node whose parent record is gone). */
  children: FlowNode[];
}

/** A child of a flow that failed, as `context.failedChildren()` lists it: where it is and why. */
export interface FailedChild extends FlowRef, ChildFailure {}

/**
 * Child results as `context.childResults()` returns them: by child topic, then child id, what
 * each child's handler returned. Both levels are objects without a prototype: a topic or id
 * named `__proto__` or `constructor` is a key like any other.
 */
export type ChildResults = Record<string, Record<string, unknown>>;

/** Flows: parents that run once their children were acked. Part of RedisAckQueueService. */
export interface RedisAckQueueFlowApi {
  /**
   * Stores a flow: every node is a message on its topic; a node with children waits (state
   * `waiting-children`) until each of them was acked, then becomes ready (after its own delay).
   * No node runs until the whole flow is stored; a call that failed part-way and is retried
   * with the same ids finishes the same flow. Resolves with the tree of ids.
   * @example
   * ```ts
   * const { id } = await queue.pushFlow({
   *   topic: 'pdf.merge',
   *   payload: { book: 7 },
   *   children: [1, 2, 3].map((page) => ({ topic: 'pdf.render', payload: { book: 7, page } })),
   * });
   * ```
   * @throws {InvalidOptionError | InvalidTopicError | InvalidMessageIdError | InvalidPayloadError |
   *   PayloadTooLargeError} for a bad node (nothing is stored).
   * @throws {RedisUnavailableError | RedisCommandError | QueueClosedError} when Redis cannot be
   *   reached or the service is closed (retry with the same ids).
   * @throws {FlowIdTakenError} when a node's id is taken by another message, or the root (or a
   *   parent) exists with other children than given.
   */
  pushFlow<const F extends Flow>(flow: F & TypedFlow<F>): Promise<FlowResult>;
  /**
   * A flow's tree from any of its nodes down, each with its state; null when no message has
   * this id on this topic. Children that ended keep their result (or failure) until their
   * parent ends. Read in pages of 500 messages, each bounded by `commandTimeoutMs` (not the
   * whole tree by one).
   * @throws {InvalidTopicError | InvalidMessageIdError} for a bad topic or id.
   * @throws {RedisUnavailableError | RedisCommandError | QueueClosedError} when a page gets no
   *   answer in time, Redis refuses it, or the service is closed.
   */
  getFlow(topic: string, id: string): Promise<FlowNode | null>;
}
