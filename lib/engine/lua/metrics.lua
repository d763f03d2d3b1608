-- metrics: counts the messages in each state, as stats does, and the age of the oldest
-- ready message: the lag a metrics scrape or a health check reports. It reads only.
-- The oldest ready message is the earliest of: the heads of the ready levels (age from their
-- enqueue time "t", the first member of the stored body), the first due delayed message
-- not yet moved (from its due time) and the first expired lease not yet moved (from its
-- deadline).
--
-- KEYS[1] ready    LIST  ids waiting, head first
-- KEYS[2] delayed  ZSET  id -> due time (ms)
-- KEYS[3] leased   ZSET  id -> lease deadline (ms)
-- KEYS[4] dead     ZSET  id -> time of death (ms)
-- KEYS[5] messages HASH  id -> stored body
-- KEYS[6] paused   STRING present while the topic is paused
-- KEYS[7] readyLevels ZSET level -> level, for the levels 1-9 whose ready LIST holds ids
-- KEYS[8] ready1     LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[9] ready2     LIST
-- KEYS[10] ready3    LIST
-- KEYS[11] ready4    LIST
-- KEYS[12] ready5    LIST
-- KEYS[13] ready6    LIST
-- KEYS[14] ready7    LIST
-- KEYS[15] ready8    LIST
-- KEYS[16] ready9    LIST
-- KEYS[17] completed ZSET id -> completion time (ms) of completed messages kept
-- KEYS[18] groupQueue ZSET grouped messages waiting for their group's turn (they count as ready)
-- KEYS[19] counters  HASH  pushed / acked -> messages stored / acked so far
-- ARGV    none
-- Returns { ready, delayed, leased, dead, oldestReadyAgeMs (-1: nothing ready), paused (1 or 0),
--          completed, pushed, acked }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_READY, K_DELAYED, K_LEASED, K_DEAD, K_MESSAGES = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_PAUSED, K_LEVELS, K_COMPLETED, K_GROUP_QUEUE, K_COUNTERS = KEYS[6], KEYS[7], KEYS[17], KEYS[18], KEYS[19]
local LEVEL_KEYS = 8
check_types(K_READY, 'list', K_DELAYED, 'zset', K_LEASED, 'zset', K_DEAD, 'zset', K_MESSAGES, 'hash', K_LEVELS, 'zset',
  K_COMPLETED, 'zset', K_COUNTERS, 'hash')

local now = now_ms()
local totals = redis.call('HMGET', K_COUNTERS, 'pushed', 'acked')
local due = redis.call('ZCOUNT', K_DELAYED, '-inf', now)
local expired = redis.call('ZCOUNT', K_LEASED, '-inf', now)
local ready = ready_count(K_READY, K_LEVELS, LEVEL_KEYS, K_GROUP_QUEUE)

local oldest = math.huge
for _, level in ipairs(levels_in_order(K_LEVELS)) do
  local key = level_key(K_READY, LEVEL_KEYS, tonumber(level))
  local head = redis.call('LINDEX', key, 0)
  if head then
    local enqueued = tonumber(string.match(redis.call('HGET', K_MESSAGES, head) or '', '^{"t":(%d+)'))
    if enqueued then
      oldest = math.min(oldest, enqueued)
    end
  end
end
if due > 0 then
  oldest = math.min(oldest, tonumber(redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')[2]))
end
if expired > 0 then
  oldest = math.min(oldest, tonumber(redis.call('ZRANGE', K_LEASED, 0, 0, 'WITHSCORES')[2]))
end

return {
  ready + due + expired,
  redis.call('ZCARD', K_DELAYED) - due,
  redis.call('ZCARD', K_LEASED) - expired,
  redis.call('ZCARD', K_DEAD),
  oldest == math.huge and -1 or math.max(0, now - oldest),
  redis.call('EXISTS', K_PAUSED),
  redis.call('ZCARD', K_COMPLETED),
  tonumber(totals[1] or 0),
  tonumber(totals[2] or 0),
}
