-- schedule-list: reads every schedule of a topic with its state, and the server clock.
--
-- KEYS[1] schedules     HASH  schedule name -> definition (JSON)
-- KEYS[2] scheduleDue   ZSET  schedule name -> next tick (ms, server clock)
-- KEYS[3] scheduleLast  HASH  schedule name -> last tick that pushed a message (ms)
-- ARGV    none
-- Returns  { now (ms), then per schedule: name, definition, nextRunAt or -1, lastRunAt or -1 }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_SCHEDULES, K_DUE, K_LAST = KEYS[1], KEYS[2], KEYS[3]
check_types(K_SCHEDULES, 'hash', K_DUE, 'zset', K_LAST, 'hash')

local reply = { now_ms() }
local all = redis.call('HGETALL', K_SCHEDULES)
for i = 1, #all, 2 do
  local name = all[i]
  reply[#reply + 1] = name
  reply[#reply + 1] = all[i + 1]
  reply[#reply + 1] = tonumber(redis.call('ZSCORE', K_DUE, name)) or -1
  reply[#reply + 1] = tonumber(redis.call('HGET', K_LAST, name)) or -1
end
return reply
