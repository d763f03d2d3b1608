-- group-quotas-get: the quotas of a topic's ordered groups (of one partition of it), as
-- group-quotas-set wrote them.
--
-- K.groupQuotas
-- ARGV    none
-- Returns the HASH's field, value pairs ('' is the default)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.groupQuotas, 'hash')

return redis.call('HGETALL', K.groupQuotas)
