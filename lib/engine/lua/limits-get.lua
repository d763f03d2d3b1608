-- limits-get: the fleet-wide limits of a topic (of one partition of it), as limits-set wrote them.
--
-- KEYS[1] limits  HASH  see limits-set.lua
-- ARGV    none
-- Returns the HASH's field, value pairs ('waiting' marks consumers held by globalConcurrency)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LIMITS = KEYS[1]
check_types(K_LIMITS, 'hash')

return redis.call('HGETALL', K_LIMITS)
