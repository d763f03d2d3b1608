-- schedule-remove: deletes one schedule of a topic with its pending tick and its last run.
--
-- K.schedules    HASH   schedule name -> definition (JSON)
-- K.scheduleDue  ZSET   schedule name -> next tick (ms, server clock)
-- K.scheduleLast HASH   schedule name -> last tick that pushed a message (ms)
-- ARGV[1] name          the schedule's name
-- Returns  { 1 removed or 0 there was none, schedules the topic has left }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.schedules, 'hash', K.scheduleDue, 'zset', K.scheduleLast, 'hash')

local name = ARGV[1]
local removed = redis.call('HDEL', K.schedules, name)
redis.call('ZREM', K.scheduleDue, name)
redis.call('HDEL', K.scheduleLast, name)
return { removed, redis.call('HLEN', K.schedules) }
