-- schedule-remove: deletes one schedule of a topic with its pending tick and its last run;
-- given a definition, only while the schedule still has it (a startup withdrawing a schedule
-- its code no longer declares leaves one upserted since by hand).
--
-- K.schedules K.scheduleDue K.scheduleLast
-- ARGV[1] name          the schedule's name
-- ARGV[2] definition    optional: remove only while the stored definition is this text
-- Returns  { 1 removed or 0 there was none (or it had another definition), schedules the topic has left }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.schedules, 'hash', K.scheduleDue, 'zset', K.scheduleLast, 'hash')

local name = ARGV[1]
if ARGV[2] and redis.call('HGET', K.schedules, name) ~= ARGV[2] then
  return { 0, redis.call('HLEN', K.schedules) }
end
local removed = redis.call('HDEL', K.schedules, name)
redis.call('ZREM', K.scheduleDue, name)
redis.call('HDEL', K.scheduleLast, name)
return { removed, redis.call('HLEN', K.schedules) }
