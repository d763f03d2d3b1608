-- schedule-upsert: creates or changes one schedule of a topic. The same definition again
-- changes nothing, so every instance may upsert its schedules at startup without moving the
-- pending tick; a new definition replaces the pending tick with the caller's next one.
--
-- KEYS[1] schedules     HASH  schedule name -> definition (JSON)
-- KEYS[2] scheduleDue   ZSET  schedule name -> next tick (ms, server clock)
-- KEYS[3] scheduleLast  HASH  schedule name -> last tick that pushed a message (ms)
-- ARGV[1] name          the schedule's name
-- ARGV[2] definition    its definition (JSON text, compared as text)
-- ARGV[3] nextRunAt     its first tick after now (ms), or -1 for none
-- Returns  { 1 changed or 0 unchanged, nextRunAt or -1, lastRunAt or -1, now (ms) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_SCHEDULES, K_DUE, K_LAST = KEYS[1], KEYS[2], KEYS[3]
check_types(K_SCHEDULES, 'hash', K_DUE, 'zset', K_LAST, 'hash')

local name, definition, next_run = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = now_ms()
local last = tonumber(redis.call('HGET', K_LAST, name)) or -1

if redis.call('HGET', K_SCHEDULES, name) == definition then
  return { 0, tonumber(redis.call('ZSCORE', K_DUE, name)) or -1, last, now }
end

redis.call('HSET', K_SCHEDULES, name, definition)
if next_run >= 0 then
  redis.call('ZADD', K_DUE, ARGV[3], name)
else
  redis.call('ZREM', K_DUE, name)
end
return { 1, next_run, last, now }
