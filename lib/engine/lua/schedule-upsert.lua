-- schedule-upsert: creates or changes one schedule of a topic. The same definition again
-- changes nothing, so every instance may upsert its schedules at startup without moving the
-- pending tick; a new definition replaces the pending tick with the caller's next one.
--
-- K.schedules    HASH   schedule name -> definition (JSON)
-- K.scheduleDue  ZSET   schedule name -> next tick (ms, server clock)
-- K.scheduleLast HASH   schedule name -> last tick that pushed a message (ms)
-- ARGV[1] name          the schedule's name
-- ARGV[2] definition    its definition (JSON text, compared as text)
-- ARGV[3] nextRunAt     its first tick after now (ms), or -1 for none
-- Returns  { 1 changed or 0 unchanged, nextRunAt or -1, lastRunAt or -1, now (ms) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.schedules, 'hash', K.scheduleDue, 'zset', K.scheduleLast, 'hash')

local name, definition, next_run = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = now_ms()
local last = tonumber(redis.call('HGET', K.scheduleLast, name)) or -1

if redis.call('HGET', K.schedules, name) == definition then
  return { 0, tonumber(redis.call('ZSCORE', K.scheduleDue, name)) or -1, last, now }
end

redis.call('HSET', K.schedules, name, definition)
if next_run >= 0 then
  redis.call('ZADD', K.scheduleDue, ARGV[3], name)
else
  redis.call('ZREM', K.scheduleDue, name)
end
return { 1, next_run, last, now }
