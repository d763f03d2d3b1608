-- release: hands leased messages back at once, at the head of ready (of their priority level), without counting
-- the interrupted delivery as an attempt (used by a consumer that shuts down).
--
-- KEYS[1] leased    ZSET  id -> lease deadline (ms)
-- KEYS[2] ready     LIST  ids waiting, head first
-- KEYS[3] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[4] tokens    HASH  id -> token of the current lease
-- KEYS[5] wake      LIST  wake-up token for blocked consumers
-- KEYS[6] priority  HASH  id -> priority level 1-9
-- KEYS[7] readyLevels ZSET level -> level, for the levels 1-9 whose ready LIST holds ids
-- KEYS[8] ready1     LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[9] ready2     LIST
-- KEYS[10] ready3    LIST
-- KEYS[11] ready4    LIST
-- KEYS[12] ready5    LIST
-- KEYS[13] ready6    LIST
-- KEYS[14] ready7    LIST
-- KEYS[15] ready8    LIST
-- KEYS[16] ready9    LIST
-- ARGV    pairs: id, token
-- Returns one integer per pair: 1 released, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LEASED, K_READY, K_ATTEMPTS, K_TOKENS, K_WAKE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_PRIORITY, K_LEVELS = KEYS[6], KEYS[7]
local LEVEL_KEYS = 8
check_types(K_LEASED, 'zset', K_READY, 'list', K_ATTEMPTS, 'hash', K_TOKENS, 'hash', K_WAKE, 'list',
  K_PRIORITY, 'hash', K_LEVELS, 'zset')

local held, results = held_leases(K_TOKENS, 1)
if #held > 0 then
  -- The interrupted attempt was only in the token: attempts keeps the count before it.
  redis.call('ZREM', K_LEASED, unpack(held))
  redis.call('HDEL', K_TOKENS, unpack(held))
  make_ready('LPUSH', K_READY, K_PRIORITY, K_LEVELS, LEVEL_KEYS, held)
  wake(K_WAKE)
end
return results
