-- pause: pauses or resumes a topic (one partition of it). While the flag is set, reserve
-- leases nothing; pushes, acks, nacks and due times go on. Resuming wakes a blocked consumer,
-- which wakes the next while work is left.
--
-- K.paused K.wake
-- ARGV[1] 1 to pause, 0 to resume
-- Returns 1 when the state changed, 0 when it already was so
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.paused, 'string', K.wake, 'list')

if ARGV[1] == '1' then
  return redis.call('SET', K.paused, '1', 'NX') and 1 or 0
end
local changed = redis.call('DEL', K.paused)
wake()
return changed
