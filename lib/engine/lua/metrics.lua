-- metrics: counts the messages in each state, as stats does, and the age of the oldest
-- ready message: the lag a metrics scrape or a health check reports. It reads only.
-- The oldest ready message is the earliest of: the head of ready (its age counts from its
-- enqueue time "t", the first member of the stored body), the first due delayed message
-- not yet moved (from its due time) and the first expired lease not yet moved (from its
-- deadline).
--
-- KEYS[1] ready    LIST  ids waiting, head first
-- KEYS[2] delayed  ZSET  id -> due time (ms)
-- KEYS[3] leased   ZSET  id -> lease deadline (ms)
-- KEYS[4] dead     ZSET  id -> time of death (ms)
-- KEYS[5] messages HASH  id -> stored body
-- ARGV    none
-- Returns { ready, delayed, leased, dead, oldestReadyAgeMs (-1: nothing ready) }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_READY, K_DELAYED, K_LEASED, K_DEAD, K_MESSAGES = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
check_types(K_READY, 'list', K_DELAYED, 'zset', K_LEASED, 'zset', K_DEAD, 'zset', K_MESSAGES, 'hash')

local now = now_ms()
local due = redis.call('ZCOUNT', K_DELAYED, '-inf', now)
local expired = redis.call('ZCOUNT', K_LEASED, '-inf', now)
local ready = redis.call('LLEN', K_READY)

local oldest = math.huge
local head = redis.call('LINDEX', K_READY, 0)
if head then
  local enqueued = tonumber(string.match(redis.call('HGET', K_MESSAGES, head) or '', '^{"t":(%d+)'))
  if enqueued then
    oldest = enqueued
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
}
