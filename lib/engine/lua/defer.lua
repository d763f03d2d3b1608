-- defer: ends a lease without counting its attempt (retryLater): the message waits in
-- delayed until now + delayMs and its deferral count goes up. A message deferred maxDeferrals
-- times already is left alone (the caller nacks it instead: that deferral counts as an
-- attempt). A stale token changes nothing. With `hold` (rateLimited: a downstream rate limit
-- said wait), the message's group, or the topic (this partition) for an ungrouped message,
-- starts nothing more until the same time.
--
-- KEYS[1] leased    ZSET  id -> lease deadline (ms)
-- KEYS[2] delayed   ZSET  id -> due time (ms)
-- KEYS[3] tokens    HASH  id -> token of the current lease
-- KEYS[4] deferrals HASH  id -> deferrals so far (deleted with the message)
-- KEYS[5] wake      LIST  wake-up token for blocked consumers
-- KEYS[6]  groupQueue    ZSET   grouped messages waiting (prelude-flow.lua has the formats)
-- KEYS[7]  groupWaiting  HASH   id -> groupQueue member
-- KEYS[8]  groupActive   HASH   id -> group, started until ended
-- KEYS[9]  groupSlots    HASH   group -> started messages not ended
-- KEYS[10] groupTurns    ZSET   group -> turn
-- KEYS[11] groupHeld     ZSET   group -> ms its rate limit holds it until
-- KEYS[12] groupSequence STRING counter of group order and turns
-- KEYS[13] limits        HASH   fleet-wide limits
-- KEYS[14] rateWindows   HASH   rate window per topic/group
-- KEYS[15] held          STRING present while rateLimited holds the topic
-- KEYS[16] wake          LIST   wake-up token (for the flow helpers)
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] delayMs       wait before the next delivery (>= 0)
-- ARGV[4] maxDeferrals  deferrals allowed without an attempt
-- ARGV[5] hold          1 to hold the group or topic as well, else 0
-- Returns 1 deferred, 0 stale token, 3 over the bound (nothing changed)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LEASED, K_DELAYED, K_TOKENS, K_DEFERRALS, K_WAKE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
use_flow_keys(6)
local id, token, delay_ms, max_deferrals = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
check_types(K_LEASED, 'zset', K_DELAYED, 'zset', K_TOKENS, 'hash', K_DEFERRALS, 'hash', K_WAKE, 'list')

-- Holds the group of a started message until `due`, or the topic (partition) for `ms` when the
-- message has none: rateLimited.
local function hold_starts(id, due, ms)
  local group = redis.call('HGET', K_GROUP_ACTIVE, id)
  if group then
    redis.call('ZREM', K_GROUP_TURNS, group)
    redis.call('ZADD', K_GROUP_HELD, due, group)
  else
    redis.call('SET', K_HELD, '1', 'PX', ms)
  end
end

if redis.call('HGET', K_TOKENS, id) ~= token then
  return 0
end
if (tonumber(redis.call('HGET', K_DEFERRALS, id)) or 0) >= max_deferrals then
  return 3
end
redis.call('HINCRBY', K_DEFERRALS, id, 1)
-- The attempt was only in the token: the attempts hash keeps the count before it.
redis.call('ZREM', K_LEASED, id)
redis.call('HDEL', K_TOKENS, id)
local first = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
local due = now_ms() + delay_ms
redis.call('ZADD', K_DELAYED, due, id)
if ARGV[5] == '1' and delay_ms > 0 then
  hold_starts(id, due, delay_ms)
end
if first[2] == nil or due < tonumber(first[2]) then
  wake(K_WAKE)
end
return 1
