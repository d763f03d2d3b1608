-- stats: counts the messages in each state. Delayed messages already due and leases
-- already expired count as ready: that is what the next reserve will see.
--
-- K.ready K.delayed K.leased K.dead K.paused K.readyLevels K.groupQueue K.groupCount K.flowWaiting
-- ARGV    none
-- Returns { ready (every level), delayed, leased, dead, paused (1 or 0), waiting for children (a
--         flow's parents, held in delayed and not counted there) }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>

-- Grouped ids waiting for their first start: counted in groupCount, or left in groupQueue by an
-- earlier version. Ready too.
local function grouped_count()
  return redis.call('ZCARD', K.groupQueue) + (tonumber(redis.call('GET', K.groupCount)) or 0)
end

check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.dead, 'zset', K.readyLevels, 'zset')

local now = now_ms()
local due = redis.call('ZCOUNT', K.delayed, '-inf', now)
local expired = redis.call('ZCOUNT', K.leased, '-inf', now)
local waiting = redis.call('ZCARD', K.flowWaiting)
return {
  ready_count() + grouped_count() + due + expired,
  redis.call('ZCARD', K.delayed) - due - waiting,
  lease_count() - expired,
  redis.call('ZCARD', K.dead),
  redis.call('EXISTS', K.paused),
  waiting,
}
