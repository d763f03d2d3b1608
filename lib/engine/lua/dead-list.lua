-- dead-list: pages through the dead letters, oldest first.
--
-- KEYS[1] dead      ZSET  id -> time of death (ms)
-- KEYS[2] deadInfo  HASH  id -> JSON { r: reason, e: error, a: attempt, t: time }
-- KEYS[3] messages  HASH  id -> stored body
-- ARGV[1] offset  entries to skip (>= 0)
-- ARGV[2] limit   entries to return (>= 1)
-- Returns { id, info or false, body or false, ... }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_DEAD, K_DEAD_INFO, K_MESSAGES = KEYS[1], KEYS[2], KEYS[3]
check_types(K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_MESSAGES, 'hash')

local offset, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for _, id in ipairs(redis.call('ZRANGE', K_DEAD, offset, offset + limit - 1)) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', K_DEAD_INFO, id)
  out[#out + 1] = redis.call('HGET', K_MESSAGES, id)
end
return out
