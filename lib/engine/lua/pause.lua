-- pause: pauses or resumes a topic (one partition of it). While the flag is set, reserve
-- leases nothing; pushes, acks, nacks and due times go on. Resuming wakes a blocked consumer,
-- which wakes the next while work is left.
--
-- KEYS[1] paused  STRING present while the topic is paused
-- KEYS[2] wake    LIST   wake-up token for blocked consumers
-- ARGV[1] 1 to pause, 0 to resume
-- Returns 1 when the state changed, 0 when it already was so
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_PAUSED, K_WAKE = KEYS[1], KEYS[2]
check_types(K_PAUSED, 'string', K_WAKE, 'list')

if ARGV[1] == '1' then
  return redis.call('SET', K_PAUSED, '1', 'NX') and 1 or 0
end
local changed = redis.call('DEL', K_PAUSED)
wake(K_WAKE)
return changed
