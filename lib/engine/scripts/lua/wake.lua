-- wake: leaves one wake-up token for the consumers of a partitioned topic, which block on
-- the wake list of the topic's home slot while its partitions live in other slots.
--
-- K.wake
-- ARGV    none
-- Returns 1
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.wake, 'list')
wake()
return 1
