-- dead-purge: deletes dead letters for good: the given ids, or else the oldest `limit`.
--
-- KEYS[1] dead      ZSET  id -> time of death (ms)
-- KEYS[2] deadInfo  HASH  id -> JSON reason
-- KEYS[3] messages  HASH  id -> stored body
-- KEYS[4] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[5] priority  HASH  id -> priority level 1-9
-- ARGV[1] limit  how many of the oldest to take when no ids follow
-- ARGV[2..] ids (optional)
-- Returns { ids taken, dead letters deleted }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_DEAD, K_DEAD_INFO, K_MESSAGES, K_ATTEMPTS, K_PRIORITY = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
check_types(K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash', K_PRIORITY, 'hash')

local ids = { unpack(ARGV, 2) }
if #ids == 0 then
  ids = redis.call('ZRANGE', K_DEAD, 0, tonumber(ARGV[1]) - 1)
end
local purged = 0
for _, id in ipairs(ids) do
  if redis.call('ZREM', K_DEAD, id) == 1 then
    redis.call('HDEL', K_DEAD_INFO, id)
    redis.call('HDEL', K_MESSAGES, id)
    redis.call('HDEL', K_ATTEMPTS, id)
    redis.call('HDEL', K_PRIORITY, id)
    purged = purged + 1
  end
end
return { #ids, purged }
