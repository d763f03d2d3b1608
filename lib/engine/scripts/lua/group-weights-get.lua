-- group-weights-get: the weights of a topic's ordered groups (of one partition of it), as
-- group-weights-set wrote them.
--
-- K.groupWeights
-- ARGV    none
-- Returns the HASH's field, value pairs
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.groupWeights, 'hash')

return redis.call('HGETALL', K.groupWeights)
