-- nack: ends a lease after a failed delivery. With attempts left the message waits in
-- delayed until now + delayMs (or goes straight to its level's ready when delayMs is 0); after the
-- last attempt it goes to dead with the error. A stale token changes nothing.
--
-- KEYS[1] leased    ZSET  id -> lease deadline (ms)
-- KEYS[2] delayed   ZSET  id -> due time (ms)
-- KEYS[3] ready     LIST  ids waiting, head first
-- KEYS[4] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[5] tokens    HASH  id -> token of the current lease
-- KEYS[6] dead      ZSET  id -> time of death (ms)
-- KEYS[7] deadInfo  HASH  id -> JSON { r: reason, e: error, a: attempt, t: time }
-- KEYS[8] wake      LIST  wake-up token for blocked consumers
-- KEYS[9] messages  HASH  id -> stored body (of dead letters that the bound deletes)
-- KEYS[10] priority  HASH  id -> priority level 1-9
-- KEYS[11] deferrals HASH id -> deferrals so far (they start over at death)
-- KEYS[12] readyLevels ZSET level -> level, for the levels 1-9 whose ready LIST holds ids
-- KEYS[13] ready1    LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[14] ready2    LIST
-- KEYS[15] ready3    LIST
-- KEYS[16] ready4    LIST
-- KEYS[17] ready5    LIST
-- KEYS[18] ready6    LIST
-- KEYS[19] ready7    LIST
-- KEYS[20] ready8    LIST
-- KEYS[21] ready9    LIST
-- KEYS[22] groupQueue    ZSET   grouped messages waiting (prelude-flow.lua has the formats)
-- KEYS[23] groupWaiting  HASH   id -> groupQueue member
-- KEYS[24] groupActive   HASH   id -> group, started until ended
-- KEYS[25] groupSlots    HASH   group -> started messages not ended
-- KEYS[26] groupTurns    ZSET   group -> turn
-- KEYS[27] groupHeld     ZSET   group -> ms its rate limit holds it until
-- KEYS[28] groupSequence STRING counter of group order and turns
-- KEYS[29] limits        HASH   fleet-wide limits
-- KEYS[30] rateWindows   HASH   rate window per topic/group
-- KEYS[31] held          STRING present while rateLimited holds the topic
-- KEYS[32] wake          LIST   wake-up token (for the flow helpers)
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] delayMs      wait before the next attempt (>= 0)
-- ARGV[4] maxAttempts  deliveries allowed in all
-- ARGV[5] error        error text to keep with a dead letter
-- ARGV[6] deadMaxCount dead letters kept at most (the oldest go first)
-- ARGV[7] deadMaxAgeMs dead letters older than this are deleted
-- Returns 1 retry, 2 dead, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LEASED, K_DELAYED, K_READY, K_ATTEMPTS = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_TOKENS, K_DEAD, K_DEAD_INFO, K_WAKE, K_MESSAGES = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local K_PRIORITY, K_DEFERRALS, K_LEVELS = KEYS[10], KEYS[11], KEYS[12]
local LEVEL_KEYS = 13
use_flow_keys(22)
local id, token, delay_ms, max_attempts = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
check_types(K_LEASED, 'zset', K_DELAYED, 'zset', K_READY, 'list', K_ATTEMPTS, 'hash',
  K_TOKENS, 'hash', K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_WAKE, 'list', K_MESSAGES, 'hash',
  K_PRIORITY, 'hash', K_DEFERRALS, 'hash', K_LEVELS, 'zset')

if redis.call('HGET', K_TOKENS, id) ~= token then
  return 0
end
redis.call('ZREM', K_LEASED, id)
redis.call('HDEL', K_TOKENS, id)

local now = now_ms()
-- A token without the attempt is a lease made by an older version, which counted it in attempts.
local attempt = token_attempt(token) or tonumber(redis.call('HGET', K_ATTEMPTS, id)) or 0
if attempt >= max_attempts then
  redis.call('HDEL', K_ATTEMPTS, id)
  bury(K_DEAD, K_DEAD_INFO, K_MESSAGES, id, 'failed', ARGV[5], attempt, now, tonumber(ARGV[6]), tonumber(ARGV[7]),
    K_PRIORITY, K_DEFERRALS)
  return 2
end

-- The lease's attempt now counts for the next delivery.
redis.call('HSET', K_ATTEMPTS, id, attempt)
if delay_ms > 0 then
  local first = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
  local due = now + delay_ms
  redis.call('ZADD', K_DELAYED, due, id)
  if first[2] == nil or due < tonumber(first[2]) then
    wake(K_WAKE)
  end
else
  make_ready('RPUSH', K_READY, K_PRIORITY, K_LEVELS, LEVEL_KEYS, { id })
  wake(K_WAKE)
end
return 1
