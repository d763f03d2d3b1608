-- dead-requeue: sends dead letters back to the tail of ready with their attempts reset:
-- the given ids, or else the oldest `limit` of them. A dead letter without a body
-- (nothing to deliver) is dropped instead.
--
-- KEYS[1] dead      ZSET  id -> time of death (ms)
-- KEYS[2] deadInfo  HASH  id -> JSON reason
-- KEYS[3] messages  HASH  id -> stored body
-- KEYS[4] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[5] ready     LIST  ids waiting, head first
-- KEYS[6] wake      LIST  wake-up token for blocked consumers
-- ARGV[1] limit  how many of the oldest to take when no ids follow
-- ARGV[2..] ids (optional)
-- Returns { ids taken, messages sent back to ready }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_DEAD, K_DEAD_INFO, K_MESSAGES, K_ATTEMPTS, K_READY, K_WAKE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
check_types(K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash', K_READY, 'list', K_WAKE, 'list')

local ids = { unpack(ARGV, 2) }
if #ids == 0 then
  ids = redis.call('ZRANGE', K_DEAD, 0, tonumber(ARGV[1]) - 1)
end
local requeued = {}
for _, id in ipairs(ids) do
  if redis.call('ZREM', K_DEAD, id) == 1 then
    redis.call('HDEL', K_DEAD_INFO, id)
    redis.call('HDEL', K_ATTEMPTS, id)
    if redis.call('HEXISTS', K_MESSAGES, id) == 1 then
      requeued[#requeued + 1] = id
    end
  end
end
if #requeued > 0 then
  push_ids('RPUSH', K_READY, requeued)
  wake(K_WAKE)
end
return { #ids, #requeued }
