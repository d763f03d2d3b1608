-- complete: acks leased messages of a topic that keeps completed messages: each one, while
-- the given token is still its lease, leaves the leased set, and its body is replaced by its
-- completed record, kept under its id (a push of the same id stays a duplicate) and listed in
-- completed. The completed set is bounded like the dead letters: the oldest beyond maxCount,
-- or older than maxAgeMs, are deleted for good (at most 100 per call). With maxCount 0 it
-- keeps nothing and acks as ack.lua does, also deleting the progress that ack.lua leaves.
--
-- K.leased        ZSET   id -> lease deadline (ms)
-- K.messages      HASH   id -> stored body; becomes the completed record
-- K.attempts      HASH   id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- K.tokens        HASH   id -> token of the current lease: <sequence>.<attempt>
-- K.completed     ZSET   id -> completion time (ms)
-- K.progress      HASH   id -> JSON progress value of a leased message
-- K.priority      HASH   id -> priority level 1-9 (dropped: a completed message is never ready again)
-- K.deferrals     HASH   id -> times deferred by retryLater (dropped likewise)
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
-- K.wake          LIST   wake-up token for blocked consumers
-- K.counters      HASH   acked -> messages acked so far
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
--                 (kept with a completed record, deleted with it or when none is kept)
-- K.stepIds       SET    ids of the messages that have steps
-- K.delayed       ZSET   id -> due time (ms): a keyed message waiting for one that ended becomes due
-- K.keys          HASH   each key's state (prelude-keys.lua)
-- K.keyOf         HASH   id -> mode and key, of a live keyed message
-- ARGV[1] maxCount  completed records kept at most (the oldest go first); 0 keeps none
-- ARGV[2] maxAgeMs  completed records older than this are deleted
-- ARGV[3..] triples: id, token, extra (a JSON object text, '{}' or with "d" duration ms and
--           "r" result, whose members end the record)
-- Returns one integer per triple: 1 completed, 0 stale token, 2 already gone (no lease: completed
--         before, by this token if its lease was still live, e.g. a resent call; or removed);
--         then 1 if a freed group or concurrency slot woke consumers, else 0; then the outbox
--         entries written (child id, entry, ...: a flow's children acked, for the caller to pass on)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash', K.tokens, 'hash', K.completed, 'zset',
  K.progress, 'hash', K.priority, 'hash', K.deferrals, 'hash', K.counters, 'hash')
check_types(K.stepIds, 'set')

local max_count, max_age = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
local results, acked, ended = {}, 0, {}
local gone = {}
-- The lease ends and nothing of the message stays but its body (or record).
local function end_lease(id)
  ended[#ended + 1] = id
  redis.call('ZREM', K.leased, id)
  for _, key in ipairs({ K.tokens, K.attempts, K.progress, K.priority, K.deferrals, K.retryDue }) do
    redis.call('HDEL', key, id)
  end
end

for i = 3, #ARGV, 3 do
  local id, token, extra = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local current = redis.call('HGET', K.tokens, id)
  if current == token and max_count == 0 then
    end_lease(id)
    redis.call('HDEL', K.messages, id)
    gone[#gone + 1] = id
    results[#results + 1] = 1
    acked = acked + 1
  elseif current == token then
    -- The stored body holds its enqueue time (enqueued_at) and, in JSON, may end with ',"m":<n>}'.
    local body = redis.call('HGET', K.messages, id) or ''
    local record = string.format('{"c":%d,"t":%d,"a":%d', now, enqueued_at(body) or 0, token_attempt(token) or 0)
    local max_attempts = string.match(string.sub(body, -20), ',"m":(%d+)}$')
    if max_attempts then
      record = record .. ',"m":' .. max_attempts
    end
    record = record .. (extra == '{}' and '}' or ',' .. string.sub(extra, 2))
    end_lease(id)
    redis.call('HSET', K.messages, id, record)
    redis.call('ZADD', K.completed, now, id)
    results[#results + 1] = 1
    acked = acked + 1
  elseif not current and (redis.call('ZSCORE', K.completed, id) or redis.call('HEXISTS', K.messages, id) == 0) then
    results[#results + 1] = 2
    -- Maybe a superseded message's consumer, saying its handler returned.
    key_drained(id)
  else
    results[#results + 1] = 0
  end
end

steps_forget(gone)
keys_ended(ended)
if acked > 0 then
  redis.call('HINCRBY', K.counters, 'acked', acked)
  -- A flow's child hands its result (the extra's "r") to its parent; a parent's children go.
  if flow_used() then
    for i = 3, #ARGV, 3 do
      if results[(i - 3) / 3 + 1] == 1 then
        flow_child_ended(ARGV[i], 'a', ARGV[i + 2])
      end
    end
    flow_forget(ended)
  end
  -- As an ack: the group's next message may start, a consumer waiting for a concurrency slot wakes.
  leases_ended(ended)
end
-- Last: 1 when a freed group or concurrency slot woke consumers (the caller wakes a partitioned topic's home).
results[#results + 1] = flow_woke and 1 or 0
results[#results + 1] = flow_ended
if max_count == 0 then
  return results
end
local dropped = oldest_beyond(K.completed, now, max_count, max_age)
if #dropped > 0 then
  redis.call('HDEL', K.messages, unpack(dropped))
  if flow_used() then
    flow_forget(dropped)
  end
  steps_forget(dropped)
  redis.call('ZREMRANGEBYRANK', K.completed, 0, #dropped - 1)
end
return results
