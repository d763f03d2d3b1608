-- schedule-index: keeps the prefix-wide index of topics that have schedules, and bumps the
-- version every scheduler watches to reload after a change.
--
-- KEYS[1] scheduleTopics   SET     topics that have schedules
-- KEYS[2] scheduleVersion  STRING  counter bumped by every change of a schedule
-- ARGV[1] action           'add' or 'remove'
-- ARGV[2] topic            the topic
-- Returns  the new version
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_TOPICS, K_VERSION = KEYS[1], KEYS[2]
check_types(K_TOPICS, 'set', K_VERSION, 'string')

if ARGV[1] == 'add' then
  redis.call('SADD', K_TOPICS, ARGV[2])
else
  redis.call('SREM', K_TOPICS, ARGV[2])
end
return redis.call('INCR', K_VERSION)
