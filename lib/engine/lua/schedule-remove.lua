-- schedule-remove: deletes one schedule of a topic with its pending tick and its last run.
--
-- KEYS[1] schedules     HASH  schedule name -> definition (JSON)
-- KEYS[2] scheduleDue   ZSET  schedule name -> next tick (ms, server clock)
-- KEYS[3] scheduleLast  HASH  schedule name -> last tick that pushed a message (ms)
-- ARGV[1] name          the schedule's name
-- Returns  { 1 removed or 0 there was none, schedules the topic has left }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_SCHEDULES, K_DUE, K_LAST = KEYS[1], KEYS[2], KEYS[3]
check_types(K_SCHEDULES, 'hash', K_DUE, 'zset', K_LAST, 'hash')

local name = ARGV[1]
local removed = redis.call('HDEL', K_SCHEDULES, name)
redis.call('ZREM', K_DUE, name)
redis.call('HDEL', K_LAST, name)
return { removed, redis.call('HLEN', K_SCHEDULES) }
