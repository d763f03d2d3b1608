-- metrics: counts the messages in each state, as stats does, and the age of the oldest
-- ready message: the lag a metrics scrape or a health check reports. It reads only.
-- The oldest ready message is the earliest of: the heads of the ready levels (age from their
-- enqueue time "t", the first member of the stored body), the first due delayed message
-- not yet moved (from its due time) and the first expired lease not yet moved (from its
-- deadline).
--
-- K.ready       LIST   ids waiting, head first
-- K.delayed     ZSET   id -> due time (ms)
-- K.leased      ZSET   id -> lease deadline (ms)
-- K.dead        ZSET   id -> time of death (ms)
-- K.messages    HASH   id -> stored body
-- K.paused      STRING present while the topic is paused
-- K.readyLevels ZSET   level -> level, for the levels 1-9 whose ready LIST holds ids
-- K.ready1      LIST   ids waiting at priority 1 (and so on up to ready9)
-- K.ready2      LIST
-- K.ready3      LIST
-- K.ready4      LIST
-- K.ready5      LIST
-- K.ready6      LIST
-- K.ready7      LIST
-- K.ready8      LIST
-- K.ready9      LIST
-- K.completed   ZSET   id -> completion time (ms) of completed messages kept
-- K.groupQueue  ZSET   grouped messages an earlier version left waiting (they count as ready)
-- K.groupCount  STRING grouped messages waiting in their groups' ZSETs (they count as ready)
-- K.counters    HASH   pushed / acked -> messages stored / acked so far
-- K.flowWaiting ZSET   parent id -> since when it waits for its children
-- ARGV    none
-- Returns { ready, delayed, leased, dead, oldestReadyAgeMs (-1: nothing ready), paused (1 or 0),
--          completed, pushed, acked, waiting for children (a flow's parents, held in delayed
--          and not counted there) }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.dead, 'zset', K.messages, 'hash', K.readyLevels, 'zset',
  K.completed, 'zset', K.counters, 'hash')

local now = now_ms()
local totals = redis.call('HMGET', K.counters, 'pushed', 'acked')
local due = redis.call('ZCOUNT', K.delayed, '-inf', now)
local expired = redis.call('ZCOUNT', K.leased, '-inf', now)
local ready = ready_count()
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
