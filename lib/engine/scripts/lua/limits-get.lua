-- limits-get: the fleet-wide limits of a topic (of one partition of it), as limits-set wrote them.
--
-- K.limits
-- ARGV    none
-- Returns the HASH's field, value pairs ('waiting' marks consumers held by globalConcurrency)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.limits, 'hash')

return redis.call('HGETALL', K.limits)
