-- group-quotas-set: replaces the quotas of a topic's ordered groups (of one partition of it), which
-- the next starts obey (prelude-quotas.lua), and wakes a blocked consumer: a quota may have opened.
-- The starts and handler time in the windows stay, so a changed quota counts them; without quotas
-- they go, with the mark qt, and the topic pays nothing for quotas again. The holds the old
-- quotas gave end: the next reserve looks at those groups again under the new ones.
--
-- K.groupQuotas K.limits K.quotaLog K.quotaHeld K.groupHeld K.wake
-- ARGV[1] keepMs  the longest window of the quotas (ms: perMs plus its dispatch allowance)
-- ARGV[2..] pairs: 'q<group>' ('q' for the default), '<max> <perMs> <scaleByWeight: 1 true> <handlerMs, 0: none>'
--           (none: no quotas)
-- Returns 1
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.groupQuotas, 'hash', K.limits, 'hash', K.quotaLog, 'zset',
  K.quotaHeld, 'zset', K.groupHeld, 'zset', K.wake, 'list')

-- The holds the old quotas gave end now: the next reserve looks at each of those groups again
-- (its groupRateLimit holds it again if it must).
local held, now = redis.call('ZRANGE', K.quotaHeld, 0, -1), string.format('%d', now_ms())
for i = 1, #held, UNPACK_MAX / 2 do
  local args = { 'XX', 'LT' }
  for k = i, math.min(i + UNPACK_MAX / 2 - 1, #held) do
    args[#args + 1] = now
    args[#args + 1] = held[k]
  end
  redis.call('ZADD', K.groupHeld, unpack(args))
end
redis.call('DEL', K.quotaHeld)
if #ARGV == 1 then
  redis.call('HDEL', K.limits, 'qt')
  redis.call('DEL', K.groupQuotas, K.quotaLog)
else
  -- The old quotas ('q' fields) go; the groups' state beside them stays.
  local old = {}
  for _, field in ipairs(redis.call('HKEYS', K.groupQuotas)) do
    if string.byte(field) == 113 then
      old[#old + 1] = field
    end
  end
  if #old > 0 then
    push_ids('HDEL', K.groupQuotas, old)
  end
  -- Up to 10,001 pairs: written UNPACK_MAX values at a time.
  local fields = {}
  for i = 2, #ARGV do
    fields[i - 1] = ARGV[i]
  end
  push_ids('HSET', K.groupQuotas, fields)
  redis.call('HSET', K.limits, 'qt', ARGV[1])
end
wake()
return 1
