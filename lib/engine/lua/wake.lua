-- wake: leaves one wake-up token for the consumers of a partitioned topic, which block on
-- the wake list of the topic's home slot while its partitions live in other slots.
--
-- KEYS[1] wake  LIST  wake-up token for blocked consumers
-- ARGV    none
-- Returns 1
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_WAKE = KEYS[1]
check_types(K_WAKE, 'list')
wake(K_WAKE)
return 1
