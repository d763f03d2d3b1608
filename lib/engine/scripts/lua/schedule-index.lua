-- schedule-index: keeps the prefix-wide index of topics that have schedules, and bumps the
-- version every scheduler watches to reload after a change.
--
-- K.scheduleTopics K.scheduleVersion
-- ARGV[1] action           'add' or 'remove'
-- ARGV[2] topic            the topic
-- Returns  the new version
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.scheduleTopics, 'set', K.scheduleVersion, 'string')

if ARGV[1] == 'add' then
  redis.call('SADD', K.scheduleTopics, ARGV[2])
else
  redis.call('SREM', K.scheduleTopics, ARGV[2])
end
return redis.call('INCR', K.scheduleVersion)
