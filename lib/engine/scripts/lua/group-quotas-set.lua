-- group-quotas-set: replaces the quotas of a topic's ordered groups (of one partition of it), which
-- the next starts obey (prelude-quotas.lua), and wakes a blocked consumer: a quota may have opened.
-- The starts and handler time in the windows stay, so a changed quota counts them; without quotas
-- they go, with the mark qt, and the topic pays nothing for quotas again. A group held by a quota
-- waits out its hold.
--
-- K.groupQuotas K.limits K.quotaLog K.quotaLast K.quotaRuns K.wake
-- ARGV[1] keepMs  the longest window of the quotas (ms: perMs plus its dispatch allowance)
-- ARGV[2..] pairs: group ('' for the default), '<max> <perMs> <scaleByWeight: 1 true> <handlerMs, 0: none>'
--           (none: no quotas)
-- Returns 1
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.groupQuotas, 'hash', K.limits, 'hash', K.quotaLog, 'zset', K.quotaLast, 'zset', K.quotaRuns, 'hash',
  K.wake, 'list')

redis.call('DEL', K.groupQuotas)
if #ARGV == 1 then
  redis.call('HDEL', K.limits, 'qt')
  redis.call('DEL', K.quotaLog, K.quotaLast, K.quotaRuns)
else
  -- Up to 10,001 pairs: written UNPACK_MAX values at a time.
  local pairs = {}
  for i = 2, #ARGV do
    pairs[i - 1] = ARGV[i]
  end
  push_ids('HSET', K.groupQuotas, pairs)
  redis.call('HSET', K.limits, 'qt', ARGV[1])
end
wake()
return 1
