-- defer: ends a lease without counting its attempt (retryLater): the message waits in
-- delayed until now + delayMs and its deferral count goes up. A message deferred maxDeferrals
-- times already is left alone (the caller nacks it instead: that deferral counts as an
-- attempt). A stale token changes nothing. With `hold` (rateLimited: a downstream rate limit
-- said wait), the message's group, or the topic (this partition) for an ungrouped message,
-- starts nothing more until the same time. The message keeps its start-by deadline: it is in
-- the sweep's index (K.expiring) again while it waits.
--
-- K.leased K.delayed K.tokens K.deferrals K.wake K.groupActive K.groupTurns K.groupHeld K.held K.retryDue
-- K.deadlines K.expiring
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
-- Read before any write: the message keeps its start-by deadline (a foreign key fails the call here).
local deadline = redis.call('HGET', K.deadlines, id)
if deadline then
  check_types(K.expiring, 'zset')
end
redis.call('HINCRBY', K.deferrals, id, 1)
-- The attempt was only in the token: the attempts hash keeps the count before it.
redis.call('ZREM', K.leased, id)
redis.call('HDEL', K.tokens, id)
-- The message keeps its group's slot but no longer holds a globalConcurrency slot.
concurrency_freed()
local now = now_ms()
runs_ended_if_any({ id }, now)
local first = redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
local due = now + delay_ms
redis.call('ZADD', K.delayed, due, id)
redis.call('HSET', K.retryDue, id, due)
if deadline then
  redis.call('ZADD', K.expiring, string.match(deadline, '^%d+'), id)
end
if ARGV[5] == '1' and delay_ms > 0 then
  hold_starts(id, due, delay_ms)
end
if first[2] == nil or due < tonumber(first[2]) then
  wake()
end
return 1
