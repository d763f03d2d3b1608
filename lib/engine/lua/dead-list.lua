-- dead-list: pages through the dead letters, oldest first.
--
-- K.dead     ZSET   id -> time of death (ms)
-- K.deadInfo HASH   id -> JSON { r: reason, e: error, a: attempt, t: time }
-- K.messages HASH   id -> stored body
-- ARGV[1] offset  entries to skip (>= 0)
-- ARGV[2] limit   entries to return (>= 1)
-- Returns { id, info or false, body or false, ... }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.dead, 'zset', K.deadInfo, 'hash', K.messages, 'hash')

local offset, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for _, id in ipairs(redis.call('ZRANGE', K.dead, offset, offset + limit - 1)) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', K.deadInfo, id)
  out[#out + 1] = redis.call('HGET', K.messages, id)
end
return out
