/** Every error and log text of the library, in one place. */
export const MESSAGES = {
  missingPeer: (name: string, feature: string) =>
    `${feature} needs the optional peer dependency "${name}": install it (npm install ${name}) or leave the feature off`,
  healthRedisDown: (reason: string) => `Redis is unreachable: ${reason}`,
  healthConsumerSilent: (topic: string, ms: number, bound: number) =>
    `The consumer of topic "${topic}" has had no answer from Redis for ${ms} ms (over ${bound}): its connection is wedged or down`,
  healthConsumerBlocked: (topic: string, ms: number, bound: number) =>
    `The consumer of topic "${topic}" was stalled for ${ms} ms in the last minute (over ${bound}): a blocked event loop`,
  healthLag: (topic: string, ms: number, bound: number) =>
    `Topic "${topic}" lags: its oldest ready message is ${ms} ms old (over ${bound})`,
  topicNotRegistered: (topic: string, reason: string) =>
    `The topic registry could not record topic "${topic}" (${reason}); topics() will not list it: ` +
    `allow the queue's user every key under {<prefix>: (the README's ACL line: ~{<prefix>:*)`,
  historyNotRecorded: (topic: string, reason: string) =>
    `History: recording the counts of topic "${topic}" failed (${reason}); they are kept and sent again with the next ones`,
  historyRange: (what: string) => `history(): ${what}`,
  gaugesFailed: (topic: string, reason: string) => `Metrics: reading the gauges of topic "${topic}" failed (${reason})`,
  outboxGaugesFailed: (reason: string) => `Metrics: reading the outbox status failed (${reason})`,
  invalidTopic: (topic: unknown) => `Invalid topic ${describe(topic)}: use 1-200 characters of A-Z a-z 0-9 . _ - :`,
  unescapedPrefix: (prefix: string) =>
    `Redis holds queue keys of prefix "${prefix}" in the layout of earlier versions, which this version does not read ` +
    `(a prefix with ':' is now escaped in key names): drain those queues with the previous version, then upgrade`,
  invalidPrefix: (prefix: unknown) => `Invalid prefix ${describe(prefix)}: use 1-100 characters of A-Z a-z 0-9 . _ - :`,
  invalidId: (id: unknown) =>
    `Invalid message id ${describe(id)}: use a non-empty string of at most 256 characters without unpaired UTF-16 surrogates`,
  payloadUndefined: (topic: string) =>
    `The payload for topic "${topic}" is undefined: pass any JSON value (null is fine)`,
  payloadNotSerializable: (topic: string, reason: string) =>
    `The payload for topic "${topic}" is not JSON-serializable (${reason}): pass plain JSON data`,
  payloadTooLarge: (topic: string, bytes: number, limit: number) =>
    `The payload for topic "${topic}" is ${bytes} bytes with its headers, over the limit of ${limit}: ` +
    `store large data elsewhere and push a reference, or raise maxPayloadBytes`,
  /** Never the value, nor a key: its id, which is not secret, names which key an operator must configure. */
  valueUndecodable: (topic: string, reason: string, keyId: string | undefined) =>
    reason === 'no-codec'
      ? `A stored value of topic "${topic}" was written by a codec (see docs/codecs.md) this process lacks: ` +
        `configure the same codec here (option codec or topicCodecs)`
      : reason === 'unknown-key'
        ? `A stored value of topic "${topic}" is encrypted with key "${keyId ?? ''}", which this process does not ` +
          `have: add that key to the codec's keys (keep a key while values it encrypted are stored)`
        : reason === 'authentication-failed'
          ? `A stored value of topic "${topic}" failed authentication under key "${keyId ?? ''}": it was changed ` +
            `in Redis after it was written, or the key with this id is not the one that encrypted it`
          : `A stored value of topic "${topic}" could not be decoded by its codec (${reason}): check the codec`,
  encryptionKeysUnavailable:
    'The encryption codec could not get its keys: its key provider failed or answered keys of the wrong shape ' +
    '(see the cause); it is asked again on the next use',
  reencryptWithoutCodec: (topic: string) =>
    `Topic "${topic}" has no codec in this service, so reencrypt has nothing to seal its values with: ` +
    `set option codec (or topicCodecs["${topic}"]) to the codec whose current key the values should move to`,
  codecKey: (keyId: string, problem: string) =>
    `Invalid encryption key "${keyId}": ${problem} (the key itself is never shown)`,
  invalidOption: (option: string, value: unknown, expected: string, userData = false) =>
    `Invalid ${option} ${userData ? kindOf(value) : describe(value)}: expected ${expected}`,
  /** A start-by deadline refused by push.lua: the server's clock judged it (its value is not said). */
  deadlineNotAhead: (option: string) =>
    `Invalid ${option}: expected a start-by deadline after the moment the message becomes due ` +
    `(by the Redis server's clock) and within the Date range (8.64e15 epoch ms)`,
  keyType: (key: string, actual: string, expected: string) =>
    `Redis key "${key}" holds a ${actual} where the queue keeps a ${expected}: ` +
    `another program uses this key; choose another prefix or topic, or remove the key`,
  redisCommand: (operation: string, topic: string | undefined, reply: string) =>
    `Redis refused ${operation}${topic === undefined ? '' : ` on topic "${topic}"`}: ${reply}`,
  /** The dedup advice only for pushes (`push`, `push a flow`): a read or an ack has no id to retry with. */
  redisUnavailable: (operation: string, topic: string | undefined, reason: string) =>
    `Cannot ${operation}${topic === undefined ? '' : ` on topic "${topic}"`}: Redis is unavailable (${reason}); ` +
    `retry once Redis answers${operation.startsWith('push') ? ' (a push retried with the same id is deduplicated while its first copy is stored or kept by keepCompleted)' : ''}`,
  /** `boundBy`: where the bound came from, e.g. 'the commandTimeoutMs' or 'the timeout given to ping'. */
  noAnswer: (ms: number, boundBy: string) =>
    `no answer within ${ms} ms, ${boundBy}; the call was not withdrawn and may still take effect when Redis returns`,
  unsupportedScheme: (scheme: string) =>
    `Invalid connection URL: the scheme "${scheme}" is not one of Redis; use ${CONNECTION_FORMS}`,
  malformedConnectionUrl: (scheme: string | undefined) =>
    `Invalid connection URL: ${scheme === undefined ? 'it is not a URL' : `it starts with "${scheme}" but is not a URL of it`}` +
    ` (redis:// takes two slashes); use ${CONNECTION_FORMS}`,
  /** Startup could not reach Redis: the error's text (with `(for <ms> ms)` in `reason` when it gave up). */
  connectFailed: (target: string, reason: string) =>
    `Cannot connect to Redis at ${target}: ${sentence(reason)} ${connectHint(reason)}`,
  connectTimeout: (target: string, ms: number) =>
    `Cannot connect to Redis at ${target}: no answer within ${ms} ms. ${connectHint('')}`,
  /** The first failure of a connection that was never ready: it retries (until connectTimeoutMs in connect()). */
  connectRetrying: (target: string, reason: string) =>
    `Cannot connect to Redis at ${target}: ${sentence(reason)} ${connectHint(reason)} Retrying until it answers`,
  /** Once per service, when connect() succeeds: where it is, without credentials. */
  connected: (where: string, queue: string | undefined) =>
    `${queue === undefined ? 'Connected' : `Queue "${queue}" connected`} to Redis at ${where}`,
  /** Where a service is, without credentials: what describeConnection() answers. */
  connectionDescription: (target: string, prefix: string, tls: boolean) =>
    `${target} (prefix "${prefix}", TLS ${tls ? 'on' : 'off'})`,
  defaultConnection: (url: string) =>
    `No connection option given: using the default ${url}, which may be a Redis other apps share. ` +
    'Set connection to the Redis this app is meant to use (in tests, a Redis of their own: nestjs-redis-ack-queue/testing)',
  /** `found`: the server and its version, e.g. 'Redis 6.2.14'. */
  oldRedis: (target: string, found: string) =>
    `The server at ${target} is ${found}: the queue needs Redis 7.0 or newer, or Valkey`,
  /** `server`: 'Redis' or 'Valkey', as the server's INFO says. */
  evictingPolicy: (server: string, target: string, policy: string) =>
    `${server} at ${target} uses maxmemory-policy ${policy}: it may evict queue keys and lose messages without a trace. ` +
    'Set maxmemory-policy noeviction (or a volatile-* policy), or pass allowEviction: true to accept the risk',
  noPersistence: (server: string, target: string) =>
    `${server} at ${target} has appendonly off: a ${server} restart or crash loses the messages pushed since its last ` +
    'RDB snapshot (all of them when snapshots are off too). Set appendonly yes for a durable queue',
  connectionLost: (target: string, reason: string) =>
    `Lost the connection to Redis at ${target} (${reason}): reconnecting; calls fail or wait meanwhile`,
  connectionRestored: (target: string) => `Connected to Redis at ${target} again`,
  schedulesWithdrawn: (prefix: string, count: number) =>
    `Removed ${count} schedule(s) of prefix "${prefix}" that an earlier startup declared and the module's ` +
    '`schedules` no longer lists (schedules upserted by hand stay)',
  /** Once per failing streak of the fleet event writer: the batch is dropped, not retried. */
  fleetEventsFailed: (count: number, reason: string) =>
    `Could not append ${count} event(s) to the fleet event stream (${reason}): they are dropped; ` +
    'events appended from now on are kept once Redis answers',
  dataLost: (target: string, prefix: string, counts: { schedules: number; limits: number; topics: number }) =>
    `Redis at ${target} came back without the data of prefix "${prefix}" (a restart without persistence, or a ` +
    `failover to a replica that did not have it): declared again ${counts.schedules} schedule(s), the limits of ` +
    `${counts.limits} consumed topic(s) and ${counts.topics} topic(s) in the registry. Messages, dead letters and ` +
    'pauses lost with it are not restored: run Redis with appendonly yes to keep them',
  redeclareFailed: (prefix: string, reason: string) =>
    `Redis lost the data of prefix "${prefix}", and declaring its schedules, limits and topics again failed ` +
    `(${reason}); retrying at the next reconnect`,
  closed: (operation: string) => `Cannot ${operation}: the queue service is closed`,
  duplicateHandler: (topic: string, first: string, second: string) =>
    `Two @QueueHandler methods for topic "${topic}": ${first} and ${second}. Keep one handler per topic`,
  handlerProvidedTwice: (handlerClass: string, modules: readonly [string, string]) =>
    `The @QueueHandler class ${handlerClass} is provided in two modules, ${modules[0]} and ${modules[1]}: Nest ` +
    'builds one instance in each, and both would consume its topics. Provide it in one module and import ' +
    'that module (export the class) where it is needed',
  invalidHandler: (where: string, reason: string) => `Invalid @QueueHandler on ${where}: ${reason}`,
  invalidListener: (where: string, reason: string) => `Invalid @OnQueueEvent on ${where}: ${reason}`,
  unknownEventType: (type: unknown, types: readonly string[]) =>
    `unknown event type ${describe(type)}: use one of ${types.join(', ')}`,
  unknownListenerQueue: (name: string, registered: string[]) =>
    `no queue named "${name}" is registered (registered: ${registered.map((n) => `"${n}"`).join(', ')}); ` +
    'register it with forRoot({ name }) or leave out { queue } to listen to the default queue',
  listenerFailed: (where: string, type: string, topic: string, reason: string) =>
    `The @OnQueueEvent('${type}') listener ${where} threw on an event of "${topic}": ${reason}`,
  duplicateQueue: (name: string, isDefault: boolean) =>
    isDefault
      ? 'RedisAckQueueModule registers the default queue twice (forRoot/forRootAsync without a name, or with ' +
        `name: '${name}'): keep one, or give the other a name (forRoot({ name: 'reports', ... })) and inject it ` +
        "with @InjectQueue('reports')"
      : `RedisAckQueueModule registers the queue "${name}" twice (forRoot/forRootAsync with name: '${name}'): ` +
        'keep one, or give the other a name of its own and inject it with @InjectQueue(thatName)',
  unknownQueue: (where: string, queue: string, registered: string[]) =>
    `@QueueHandler on ${where} consumes from the queue "${queue}", which no RedisAckQueueModule.forRoot/forRootAsync ` +
    `registers (registered: ${registered.length > 0 ? registered.map((name) => `"${name}"`).join(', ') : 'none'}): ` +
    `register it with forRoot({ name: '${queue}', ... }) or fix the handler's queue option`,
  replacedWithoutMethod: (where: string, method: string) =>
    `${where} is a @QueueHandler, but the provider that replaces its class (overrideProvider, useValue or useFactory) ` +
    `has no method "${method}": give the replacement a ${method}(payload, context) method, or do not replace the class`,
  unknownHandlerOverride: (topic: string, served: string[]) =>
    `The testing override replaces the handler of topic "${topic}", but no @QueueHandler consumes it (handlers found: ` +
    `${served.length > 0 ? served.map((name) => `"${name}"`).join(', ') : 'none'}): fix the topic's name in handlers, ` +
    'or remove the entry',
  testRedisNotFound: (looked: string[]) =>
    `No Redis server binary was found (looked for ${looked.join(', ')}). startTestRedis() runs a private server ` +
    'from a local binary: install one (Debian/Ubuntu: apt install redis-server; macOS: brew install redis; or ' +
    'Valkey 8: apt install valkey-server / brew install valkey), or set REDIS_SERVER_BIN (or the binary option) ' +
    'to its path',
  testRedisStartFailed: (binary: string, port: number, reason: string, logTail: string) =>
    `The test Redis server (${binary}, port ${port}) did not start: ${reason}` +
    (logTail === '' ? '' : `. The end of its log:\n${logTail}`),
  consumerShutdown: (topic: string) =>
    `The consumer of topic "${topic}" is shutting down: the message was released for another consumer`,
  handlerTimeout: (ms: number) => `The handler did not finish within timeoutMs (${ms} ms)`,
  leaseLost: (topic: string, id: string) =>
    `Lost the lease of message ${id} on topic "${topic}": it expired and may be delivered again`,
  idleTimeout: (topic: string, ms: number) => `Topic "${topic}" still had work after ${ms} ms`,
  consumersStarted: (topic: string, where: string, concurrency: number, queue?: string) =>
    `Consuming "${topic}"${queue === undefined ? '' : ` of queue "${queue}"`} with ${where} (concurrency ${concurrency})`,
  consumerError: (topic: string, reason: string) => `Consumer of "${topic}" paused: ${reason}; retrying`,
  consumerResumed: (topic: string) => `Consumer of "${topic}" resumed`,
  retrying: (topic: string, id: string, attempt: number, maxAttempts: number, delayMs: number, reason: string) =>
    `Message ${id} of "${topic}" failed on attempt ${attempt} of ${maxAttempts}: ${reason}; retrying in ${Math.ceil(delayMs)} ms`,
  deadLettered: (topic: string, id: string, attempt: number, deadReason: string, reason: string) =>
    `Message ${id} of "${topic}" went to the dead letters as ${deadReason} on attempt ${attempt}: ${reason}`,
  parentDeadLettered: (topic: string, id: string, reason: string) =>
    `Flow parent ${id} of "${topic}" went to the dead letters as child-failed: ${reason}`,
  malformedBody: 'the stored body is not valid JSON',
  retryLater: (ms: number) => `The handler asked to retry later, in ${ms} ms`,
  limitsNotWritten: (topic: string, reason: string) =>
    `Could not write the limits of topic "${topic}" (${reason}); its consumer starts once they are written, retrying every second`,
  rateLimited: (ms: number) => `A downstream rate limit holds the message's group or topic for ${ms} ms`,
  deferred: (topic: string, id: string, attempt: number, ms: number) =>
    `Deferred message ${id} on topic "${topic}" for ${ms} ms (attempt ${attempt} not counted)`,
  overDeferred: (topic: string, id: string, max: number) =>
    `Message ${id} on topic "${topic}" was deferred ${max} times (maxDeferrals): this deferral counts as an attempt`,
  handlersWithoutModule: (className: string) =>
    `${className} has @QueueHandler methods but no RedisAckQueueModule.forRoot()/forRootAsync() is imported in this app: ` +
    'its handlers will not consume. Import the module, or ignore this in a unit test that builds the class alone',
  messageRejected: (reason: string) => `Message rejected, dead-lettered without a retry: ${reason}`,
  guardDenied: (detail: string, guard: string, contextType: string) =>
    `a guard denied it (${detail}): ${guard} returned false on a queue message, where context.getType() returns ` +
    `'${contextType}'; if it was written for HTTP, have it return true when context.getType() !== 'http'`,
  guardThrew: (guard: string, contextType: string, detail: string) =>
    `the guard ${guard} threw on a queue message, where context.getType() returns '${contextType}' (${detail}): ` +
    `guards written for HTTP should return true (or skip) when context.getType() !== 'http'`,
  pipeRefused: (detail: string) => `a pipe refused its payload (${detail})`,
  transportGuardDenied: (topic: string) =>
    `a guard denied it on "${topic}" (Nest's 'Forbidden resource'): if it was written for HTTP, have it return true ` +
    `when context.getType() !== 'http'`,
  transportRejected: (detail: string) => `a guard, pipe or handler refused it (${detail})`,
  transportHandlerFailed: (detail: string) =>
    `${detail}` +
    (detail === 'Internal server error'
      ? " (Nest's exception filter replaced an error that is not an RpcException: its log line, 'RpcExceptionsHandler', " +
        'has it; to dead-letter a payload a pipe refuses at once, register RedisAckQueueRefusalFilter on the microservice)'
      : ''),
  unknownPatternOption: (topic: string, option: string, suggestion: string | undefined, known: readonly string[]) =>
    `The pattern decorator of "${topic}" has the extra ${describe(option)}, which is no handler option` +
    (suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`) +
    `: the extras may set ${known.join(', ')}. Extras meant for another transport need the handler bound to it: ` +
    '@EventPattern(pattern, transportId, extras)',
  requestTimedOut: (topic: string, ms: number) =>
    `No reply from "${topic}" within ${ms} ms: no server handled the request in time (a server consuming its pattern ` +
    `may be missing or busy); raise timeoutMs (client option or RedisAckQueueRecord) if it needs longer`,
  duplicateRequest: (topic: string) =>
    `A request of "${topic}" with this id still waits for its reply, so this send was refused (the first goes on): ` +
    'give each send its own RedisAckQueueRecord id, or leave the id out',
  transportNotDeserialized: (errorName: string) =>
    `the server's deserializer threw a ${errorName} on its body: fix the deserializer, or the client's serializer`,
  serializerThrew: (errorName: string) => `the server's serializer threw a ${errorName}: fix the serializer`,
  replyNotSent: (topic: string, reason: string) =>
    `The reply to a request of "${topic}" cannot be sent, so the caller gets an error instead: ${reason}`,
  unknownReplyChannel: (topic: string) =>
    `A request of "${topic}" names no reply channel of this prefix in its headers: it was handled as an event, no reply sent`,
  draining: (topic: string, running: number, ms: number) =>
    `Draining ${running} running handler(s) of "${topic}" (up to ${ms} ms)`,
  drainLeftovers: (topic: string, count: number) =>
    `Released ${count} unfinished message(s) of "${topic}" back to ready at shutdown`,
  replicationTimeout: (topic: string, count: number, confirmed: number, wanted: number) =>
    `Pushed ${count} message(s) to topic "${topic}" but only ${confirmed} of ${wanted} replica(s) confirmed them in time: ` +
    'a failover now could lose them; push them again with the same ids (deduplicated) or treat them as not sent',
  partitionMismatch: (topic: string, configured: number, stored: number) =>
    `Topic "${topic}" has ${stored} partition(s) in Redis but ${configured} in this process' topics option: ` +
    'producers and consumers must agree; to change the count, drain the topic and delete its partitions key',
  invalidSchedule: (topic: string, name: unknown, reason: string) =>
    `Invalid schedule ${describe(name)} of topic "${topic}": ${reason}`,
  schedulerFailed: (reason: string) => `Scheduler paused: ${reason}; retrying every second`,
  bulkRunnerFailed: (reason: string) =>
    `Bulk action runner paused: ${reason}; retrying every second (another service may take its bulk action over once its lease lapses)`,
  // Look-up, cancel, completed records and progress.
  messageCancelled: (topic: string, id: string) =>
    `Message ${id} of "${topic}" was cancelled while its handler ran: its outcome is ignored`,
  invalidStoredValue: (what: string, topic: string, reason: string) =>
    `The ${what} of a message of "${topic}" cannot be stored: ${reason}`,
  valueTooLarge: (bytes: number, limit: number) =>
    `its JSON is ${bytes} bytes, over the limit of ${limit}: store a smaller value (a summary, a reference)`,
  valueNotJson: (reason: string) => `it is not JSON-serializable (${reason}): pass plain JSON data`,
  flowIdTaken: (topic: string, id: string) =>
    `pushFlow: id ${id} of "${topic}" is taken by a message outside this flow, so nothing of the flow runs: give that node another id`,
  flowChildGone: (topic: string, id: string, childTopic: string, childId: string) =>
    `requeueDead: flow parent ${id} of "${topic}" runs only after its children, and its failed child ${childId} of "${childTopic}" is gone (cancelled, or its dead letter deleted), so nothing was requeued: push the flow again, or purge the parent`,
  childFailed: (topic: string, id: string, reason: string) =>
    `A child of this flow failed: message ${id} of "${topic}" (${reason})`,
  childResultDropped: (topic: string, id: string, reason: string) =>
    `Message ${id} of "${topic}" was acked and its parent in the flow gets no result from it: ${reason}`,
  resultDropped: (topic: string, id: string, reason: string) =>
    `Message ${id} of "${topic}" was acked and kept as completed without its result: ${reason}`,
  // Durable steps (context.step).
  invalidStepResult: (topic: string, id: string, step: string, reason: string) =>
    `The result of step "${step}" of message ${id} of "${topic}" cannot be stored: ${reason}`,
  tooManySteps: (max: number) =>
    `the message holds ${max} steps already, the most one may: use fewer steps (one step may return several values)`,
  stepName: (max: number) => `a step name: a string of 1-${max} characters without unpaired surrogates`,
  // A topic's history as the dashboard and the CLI ask for it: input refused before anything is read.
  historyTime: (name: string) => `${name} must be a time: epoch ms, or ISO 8601 text such as 2026-11-26T18:00:00Z`,
  historyStep: (name: string) =>
    `${name} must be a whole number of minutes from 1 minute to 24 hours: 1m, 15m, 1h, or ms (60000)`,
  historySpan: (name: string) => `${name} must be a duration from 1 minute to 25 hours: 30m, 1h, 24h, or ms (3600000)`,
  historyEither: (first: string, second: string) => `give ${first} or ${second}, not both`,
  historyOrder: (from: string, to: string) => `${from} must not be after ${to}`,
  usageTop: (name: string, max: number) => `${name} must be a whole number of groups from 1 to ${max}`,
  historyTooManySteps: (steps: number, max: number) =>
    `the range holds ${steps} steps, over ${max}: narrow it or take a longer step`,
  // A bulk action as the dashboard and the CLI take it: refused before anything is counted or changed.
  // None quotes the value: a tag or an error text is the user's data.
  bulkAction: (name: string, actions: readonly string[]) => `${name} must be one of ${actions.join(', ')}`,
  bulkState: (name: string, action: string, states: readonly string[]) =>
    `${name} must be one of ${states.join(', ')} for ${action}`,
  bulkTag: (name: string) => `${name} must be 1 to 128 bytes of text without control characters`,
  bulkErrorContains: (name: string) => `${name} must be 1 to 1,024 characters of text`,
  bulkRate: (name: string) => `${name} must be a whole number from 1 to 1,000,000`,
  outboxNotConfigured: (operation: string) =>
    `${operation} needs the outbox: give the service the option outbox: { connection, table? } (see docs/outbox.md)`,
  outboxTransaction: (reason: string, library: string | undefined, hint: string) =>
    (reason === 'unknown'
      ? 'pushInTransaction(): the transaction is not one the outbox knows'
      : reason === 'closed'
        ? `pushInTransaction(): the ${library ?? ''} transaction is already closed (committed, rolled back or released)`
        : reason === 'wrong-database'
          ? `pushInTransaction(): the ${library ?? ''} transaction is not on PostgreSQL, the only database the outbox supports`
          : `pushInTransaction(): the ${library ?? ''} object is not inside a transaction`) +
    `: ${hint}. Nothing was written`,
  outboxTableMissing: (table: string) =>
    `The outbox table "${table}" does not exist: create it once with outboxMigrationSql(${JSON.stringify(table)}) ` +
    `(or the package's sql/outbox.sql) in a migration`,
  outboxDatabase: (operation: string, reason: string) => `The outbox's database refused ${operation}: ${reason}`,
  outboxRelayRedisDown: (rows: number, reason: string) =>
    `Outbox relay: Redis cannot be reached (${reason}); ${rows} rows are kept in the outbox and tried again`,
  outboxRelayRedisBack: () => 'Outbox relay: Redis answers again; relaying resumed',
  outboxRelayDatabaseDown: (reason: string) => `Outbox relay: the database cannot be reached (${reason}); trying again`,
  outboxRowDead: (rowId: string, topic: string, reason: string) =>
    `Outbox relay: row ${rowId} for topic "${topic}" can never be pushed (${reason}): it is kept as dead (see outboxDead())`,
} as const;

/** The connection strings the library reads, as the refusal of another one lists them. */
const CONNECTION_FORMS =
  'redis://[user:password@]host:port/db, rediss://... (TLS), unix:///path/to/redis.sock, /path/to/redis.sock or host:port';

/** A reason as a sentence: one full stop at its end. */
function sentence(reason: string): string {
  return reason.endsWith('.') ? reason : `${reason}.`;
}

/** What to check after a failed connect, by the reason Redis (or the socket) gave. */
function connectHint(reason: string): string {
  if (/NOAUTH|WRONGPASS|invalid password|Client sent AUTH|\bAUTH\b/.test(reason))
    return 'Check the username and password of the connection option.';
  if (/NOPERM/.test(reason)) return "Check the ACL user's permissions (the README's ACL line).";
  if (/DB index/.test(reason)) return 'Use a database number the server has (below its databases setting).';
  return (
    'Is Redis running at that address? Check the host and port of the connection option, TLS ' +
    '(rediss:// when the server requires it, redis:// when it does not) and the password.'
  );
}

/** A value by its kind alone (`(a string)`, `(an object)`), for user data, which no text quotes. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return '(an array)';
  return typeof value === 'object' ? '(an object)' : `(a ${typeof value})`;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (value instanceof Date) return `Date(${Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString()})`;
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
