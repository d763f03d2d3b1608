-- defer: ends a lease without counting its attempt (retryLater): the message waits in
-- delayed until now + delayMs and its deferral count goes up. A message deferred maxDeferrals
-- times already is left alone (the caller nacks it instead: that deferral counts as an
-- attempt). A stale token changes nothing. With `hold` (rateLimited: a downstream rate limit
-- said wait), the message's group, or the topic (this partition) for an ungrouped message,
-- starts nothing more until the same time.
--
-- K.leased        ZSET   id -> lease deadline (ms)
-- K.delayed       ZSET   id -> due time (ms)
-- K.tokens        HASH   id -> token of the current lease
-- K.deferrals     HASH   id -> deferrals so far (deleted with the message)
-- K.wake          LIST   wake-up token for blocked consumers
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
-- K.keys          HASH   each key's state (prelude-keys.lua)
-- K.keyOf         HASH   id -> mode and key, of a live keyed message
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] delayMs       wait before the next delivery (>= 0)
-- ARGV[4] maxDeferrals  deferrals allowed without an attempt
-- ARGV[5] hold          1 to hold the group or topic as well, else 0
-- Returns 1 deferred, 0 stale token, 3 over the bound (nothing changed)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id, token, delay_ms, max_deferrals = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
check_types(K.leased, 'zset', K.delayed, 'zset', K.tokens, 'hash', K.deferrals, 'hash', K.wake, 'list', K.retryDue,
  'hash')

-- Holds the group of a started message until `due`, or the topic (partition) for `ms` when the
-- message has none: rateLimited.
local function hold_starts(id, due, ms)
  local group = redis.call('HGET', K.groupActive, id)
  if group then
    redis.call('ZREM', K.groupTurns, group)
    redis.call('ZADD', K.groupHeld, due, group)
  else
    redis.call('SET', K.held, '1', 'PX', ms)
  end
end

if redis.call('HGET', K.tokens, id) ~= token then
  -- Maybe a superseded message's consumer, its handler ended (see nack.lua).
  key_drained(id)
  return 0
end
if (tonumber(redis.call('HGET', K.deferrals, id)) or 0) >= max_deferrals then
  return 3
end
redis.call('HINCRBY', K.deferrals, id, 1)
-- The attempt was only in the token: the attempts hash keeps the count before it.
redis.call('ZREM', K.leased, id)
redis.call('HDEL', K.tokens, id)
-- The message keeps its group's slot but no longer holds a globalConcurrency slot.
concurrency_freed()
local first = redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
local due = now_ms() + delay_ms
redis.call('ZADD', K.delayed, due, id)
redis.call('HSET', K.retryDue, id, due)
if ARGV[5] == '1' and delay_ms > 0 then
  hold_starts(id, due, delay_ms)
end
if first[2] == nil or due < tonumber(first[2]) then
  wake()
end
return 1
