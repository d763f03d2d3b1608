-- nack: ends a lease after a failed delivery. With attempts left the message waits in
-- delayed until now + delayMs (or goes straight to its level's ready when delayMs is 0); after the
-- last attempt it goes to dead with the error. A stale token changes nothing.
--
-- K.leased        ZSET   id -> lease deadline (ms)
-- K.delayed       ZSET   id -> due time (ms)
-- K.ready         LIST   ids waiting, head first
-- K.attempts      HASH   id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- K.tokens        HASH   id -> token of the current lease
-- K.dead          ZSET   id -> time of death (ms)
-- K.deadInfo      HASH   id -> JSON { r: reason, e: error, a: attempt, m: maxAttempts, t: time }
-- K.wake          LIST   wake-up token for blocked consumers
-- K.messages      HASH   id -> stored body (of dead letters that the bound deletes)
-- K.priority      HASH   id -> priority level 1-9
-- K.deferrals     HASH   id -> deferrals so far (they start over at death)
-- K.readyLevels   ZSET   level -> level, for the levels 1-9 whose ready LIST holds ids
-- K.ready1        LIST   ids waiting at priority 1 (and so on up to ready9)
-- K.ready2        LIST
-- K.ready3        LIST
-- K.ready4        LIST
-- K.ready5        LIST
-- K.ready6        LIST
-- K.ready7        LIST
-- K.ready8        LIST
-- K.ready9        LIST
-- K.groupQueue    ZSET   grouped messages an earlier version left waiting (drained only)
-- K.groupWaiting  HASH   id -> '<group>\0<sequence>\0<id>' of a delayed grouped message
-- K.groups        PREFIX of each group's ZSET of waiting ids (id -> sequence), not a key
-- K.groupCount    STRING grouped messages waiting in the groups' ZSETs
-- K.groupActive   HASH   id -> group, started until ended
-- K.groupSlots    HASH   group -> started messages not ended
-- K.groupTurns    ZSET   group -> turn
-- K.groupHeld     ZSET   group -> ms its rate limit holds it until
-- K.groupSequence STRING counter of group order and turns
-- K.limits        HASH   fleet-wide limits
-- K.rateLog       ZSET   starts in the current rate window of the topic and each group
-- K.rateLast      ZSET   topic ('') or group -> ms of its last start in rateLog
-- K.held          STRING present while rateLimited holds the topic
-- K.groupWeights  HASH   group -> weight (none: round robin)
-- K.groupPasses   ZSET   '' -> virtual clock, group -> its next weighted turn
-- K.retryDue      HASH   id -> when its next delivery became due (ms), until it is leased
-- K.flowParents   HASH   child id -> its parent, the flow's root, its own delay (JSON)
-- K.flowChildren  PREFIX of each parent's HASH of children (see queue-keys.ts), not a key
-- K.flowOpen      SET    parents whose children's HASH exists
-- K.flowWaiting   ZSET   parent id -> since when it waits for its children
-- K.flowOutbox    HASH   child id -> an end its parent has not heard yet
-- K.flowOutboxDue ZSET   child id -> when its outbox entry was written
-- K.flowSequence  STRING counter ordering the outbox entries of a child
-- K.flowUncommitted ZSET id -> time stored, of flow nodes whose root is not stored yet
-- K.steps         PREFIX of each message's HASH of durable steps, `<steps><id>`, not a key
--                 (deleted with the message; kept while it is dead)
-- K.stepIds       SET    ids of the messages that have steps
-- K.keys          HASH   each key's state (prelude-keys.lua)
-- K.keyOf         HASH   id -> mode and key, of a live keyed message
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] delayMs      wait before the next attempt (>= 0)
-- ARGV[4] maxAttempts  deliveries allowed in all
-- ARGV[5] error        error text to keep with a dead letter
-- ARGV[6] deadMaxCount dead letters kept at most (the oldest go first)
-- ARGV[7] deadMaxAgeMs dead letters older than this are deleted
-- Returns 1 retry, 0 stale token, or { 2 dead, the outbox entries written (child id, entry: a
--         flow's child dead, for the caller to pass on) }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id, token, delay_ms, max_attempts = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
check_types(K.leased, 'zset', K.delayed, 'zset', K.ready, 'list', K.attempts, 'hash',
  K.tokens, 'hash', K.dead, 'zset', K.deadInfo, 'hash', K.wake, 'list', K.messages, 'hash',
  K.priority, 'hash', K.deferrals, 'hash', K.readyLevels, 'zset', K.retryDue, 'hash')
check_types(K.stepIds, 'set')

if redis.call('HGET', K.tokens, id) ~= token then
  -- Maybe a superseded message's consumer, its handler ended (a heartbeat heard of the lost lease
  -- before the cancel notice came): its key's next message need not wait for the lease's deadline.
  key_drained(id)
  return 0
end
redis.call('ZREM', K.leased, id)
redis.call('HDEL', K.tokens, id)

local now = now_ms()
-- A token without the attempt is a lease made by an older version, which counted it in attempts.
local attempt = token_attempt(token) or tonumber(redis.call('HGET', K.attempts, id)) or 0
if attempt >= max_attempts then
  redis.call('HDEL', K.attempts, id)
  bury(id, 'failed', ARGV[5], attempt, max_attempts, now, tonumber(ARGV[6]), tonumber(ARGV[7]))
  return { 2, flow_ended }
end

-- The lease's attempt now counts for the next delivery; the message keeps its group's slot
-- through its retries, but no longer holds a globalConcurrency slot.
redis.call('HSET', K.attempts, id, attempt)
concurrency_freed()
-- When the retry is due: the next delivery's wait (waitMs) counts from there.
redis.call('HSET', K.retryDue, id, now + delay_ms)
if delay_ms > 0 then
  local first = redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
  local due = now + delay_ms
  redis.call('ZADD', K.delayed, due, id)
  if first[2] == nil or due < tonumber(first[2]) then
    wake()
  end
else
  make_ready('RPUSH', { id })
  wake()
end
return 1
