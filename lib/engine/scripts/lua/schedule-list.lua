-- schedule-list: reads every schedule of a topic with its state, and the server clock.
--
-- K.schedules K.scheduleDue K.scheduleLast
-- ARGV    none
-- Returns  { now (ms), then per schedule: name, definition, nextRunAt or -1, lastRunAt or -1 }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.schedules, 'hash', K.scheduleDue, 'zset', K.scheduleLast, 'hash')

local reply = { now_ms() }
local all = redis.call('HGETALL', K.schedules)
for i = 1, #all, 2 do
  local name = all[i]
  reply[#reply + 1] = name
  reply[#reply + 1] = all[i + 1]
  reply[#reply + 1] = tonumber(redis.call('ZSCORE', K.scheduleDue, name)) or -1
  reply[#reply + 1] = tonumber(redis.call('HGET', K.scheduleLast, name)) or -1
end
return reply
