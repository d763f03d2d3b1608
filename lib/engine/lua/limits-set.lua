-- limits-set: replaces the fleet-wide limits of a topic (of one partition of it), which every
-- reserve reads, and wakes a blocked consumer: a limit may have opened.
--
-- KEYS[1] limits  HASH  c: globalConcurrency, rm/rw: rateLimit max/perMs,
--                       gm/gw: groupRateLimit max/perMs, gc: groupConcurrency
-- KEYS[2] wake    LIST  wake-up token for blocked consumers
-- ARGV    pairs: field, value (none: no limit at all)
-- Returns 1
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LIMITS, K_WAKE = KEYS[1], KEYS[2]
check_types(K_LIMITS, 'hash', K_WAKE, 'list')

redis.call('DEL', K_LIMITS)
if #ARGV > 0 then
  redis.call('HSET', K_LIMITS, unpack(ARGV))
end
wake(K_WAKE)
return 1
