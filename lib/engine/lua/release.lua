-- release: hands leased messages back at once, at the head of ready, without counting
-- the interrupted delivery as an attempt (used by a consumer that shuts down).
--
-- KEYS[1] leased    ZSET  id -> lease deadline (ms)
-- KEYS[2] ready     LIST  ids waiting, head first
-- KEYS[3] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[4] tokens    HASH  id -> token of the current lease
-- KEYS[5] wake      LIST  wake-up token for blocked consumers
-- ARGV    pairs: id, token
-- Returns one integer per pair: 1 released, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LEASED, K_READY, K_ATTEMPTS, K_TOKENS, K_WAKE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
check_types(K_LEASED, 'zset', K_READY, 'list', K_ATTEMPTS, 'hash', K_TOKENS, 'hash', K_WAKE, 'list')

local held, results = held_leases(K_TOKENS, 1)
if #held > 0 then
  -- The interrupted attempt was only in the token: attempts keeps the count before it.
  redis.call('ZREM', K_LEASED, unpack(held))
  redis.call('HDEL', K_TOKENS, unpack(held))
  redis.call('LPUSH', K_READY, unpack(held))
  wake(K_WAKE)
end
return results
