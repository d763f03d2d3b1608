-- limits-set: replaces the fleet-wide limits of a topic (of one partition of it), which every
-- reserve reads, and wakes a blocked consumer: a limit may have opened.
--
-- K.limits HASH   c: globalConcurrency, rm/rw: rateLimit max/perMs,
--                       gm/gw: groupRateLimit max/perMs, gc: groupConcurrency
-- K.wake   LIST   wake-up token for blocked consumers
-- ARGV    pairs: field, value (none: no limit at all)
-- Returns 1
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.limits, 'hash', K.wake, 'list')

redis.call('DEL', K.limits)
if #ARGV > 0 then
  redis.call('HSET', K.limits, unpack(ARGV))
end
wake()
return 1
