-- dead-requeue: sends dead letters back to the tail of ready (of their priority level) with their attempts reset:
-- the given ids, or else the oldest `limit` of them. A dead letter without a body
-- (nothing to deliver) is dropped instead.
--
-- KEYS[1] dead      ZSET  id -> time of death (ms)
-- KEYS[2] deadInfo  HASH  id -> JSON reason
-- KEYS[3] messages  HASH  id -> stored body
-- KEYS[4] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[5] ready     LIST  ids waiting, head first
-- KEYS[6] wake      LIST  wake-up token for blocked consumers
-- KEYS[7] priority  HASH  id -> priority level 1-9
-- KEYS[8] readyLevels ZSET level -> level, for the levels 1-9 whose ready LIST holds ids
-- KEYS[9] ready1     LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[10] ready2    LIST
-- KEYS[11] ready3    LIST
-- KEYS[12] ready4    LIST
-- KEYS[13] ready5    LIST
-- KEYS[14] ready6    LIST
-- KEYS[15] ready7    LIST
-- KEYS[16] ready8    LIST
-- KEYS[17] ready9    LIST
-- ARGV[1] limit  how many of the oldest to take when no ids follow
-- ARGV[2..] ids (optional)
-- Returns { ids taken, messages sent back to ready }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_DEAD, K_DEAD_INFO, K_MESSAGES, K_ATTEMPTS, K_READY, K_WAKE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local K_PRIORITY, K_LEVELS = KEYS[7], KEYS[8]
local LEVEL_KEYS = 9
check_types(K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash', K_READY, 'list', K_WAKE, 'list',
  K_PRIORITY, 'hash', K_LEVELS, 'zset')

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
    else
      redis.call('HDEL', K_PRIORITY, id)
    end
  end
end
if #requeued > 0 then
  make_ready('RPUSH', K_READY, K_PRIORITY, K_LEVELS, LEVEL_KEYS, requeued)
  wake(K_WAKE)
end
return { #ids, #requeued }
