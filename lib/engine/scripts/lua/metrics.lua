-- metrics: counts the messages in each state, as stats does, and the age of the oldest
-- ready message: the lag a metrics scrape or a health check reports. It reads only.
-- The oldest ready message is the earliest of: the heads of the ready levels (age from their
-- enqueue time "t", the first member of the stored body), the first due delayed message
-- not yet moved (from its due time) and the first expired lease not yet moved (from its
-- deadline).
--
-- K.ready K.delayed K.leased K.dead K.messages K.paused K.readyLevels K.completed K.groupQueue K.groupCount
-- K.counters K.flowWaiting
-- ARGV    none
-- Returns { ready, delayed, leased, dead, oldestReadyAgeMs (-1: nothing ready), paused (1 or 0),
--          completed, pushed, acked, waiting for children (a flow's parents, held in delayed
--          and not counted there) }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>

-- Grouped ids waiting for their first start: counted in groupCount, or left in groupQueue by an
-- earlier version. Ready too.
local function grouped_count()
  return redis.call('ZCARD', K.groupQueue) + (tonumber(redis.call('GET', K.groupCount)) or 0)
end

check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.dead, 'zset', K.messages, 'hash', K.readyLevels, 'zset',
  K.completed, 'zset', K.counters, 'hash')

local now = now_ms()
local totals = redis.call('HMGET', K.counters, 'pushed', 'acked')
local due = redis.call('ZCOUNT', K.delayed, '-inf', now)
local expired = redis.call('ZCOUNT', K.leased, '-inf', now)
local ready = ready_count() + grouped_count()
local waiting = redis.call('ZCARD', K.flowWaiting)

local oldest = math.huge
for _, level in ipairs(levels_in_order()) do
  local key = level_key(tonumber(level))
  local head = redis.call('LINDEX', key, 0)
  if head then
    local enqueued = enqueued_at(redis.call('HGET', K.messages, head) or '')
    if enqueued then
      oldest = math.min(oldest, enqueued)
    end
  end
end
if due > 0 then
  oldest = math.min(oldest, tonumber(redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')[2]))
end
if expired > 0 then
  oldest = math.min(oldest, tonumber(redis.call('ZRANGE', K.leased, 0, 0, 'WITHSCORES')[2]))
end

return {
  ready + due + expired,
  redis.call('ZCARD', K.delayed) - due - waiting,
  lease_count() - expired,
  redis.call('ZCARD', K.dead),
  oldest == math.huge and -1 or math.max(0, now - oldest),
  redis.call('EXISTS', K.paused),
  redis.call('ZCARD', K.completed),
  tonumber(totals[1] or 0),
  tonumber(totals[2] or 0),
  waiting,
}
