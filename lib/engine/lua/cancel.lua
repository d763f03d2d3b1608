-- cancel: removes one message for good, whatever its state, with every key that holds
-- something of it. A leased one loses its token (its late ack or nack changes nothing) and
-- its id is published on the cancelled channel, so the consumer running it aborts its handler.
--
-- KEYS[1]  ready     LIST  ids waiting, head first
-- KEYS[2]  delayed   ZSET  id -> due time (ms)
-- KEYS[3]  leased    ZSET  id -> lease deadline (ms)
-- KEYS[4]  messages  HASH  id -> stored body
-- KEYS[5]  attempts  HASH  id -> deliveries whose lease ended unacked
-- KEYS[6]  tokens    HASH  id -> token of the current lease
-- KEYS[7]  dead      ZSET  id -> time of death (ms)
-- KEYS[8]  deadInfo  HASH  id -> JSON reason of death
-- KEYS[9]  completed ZSET  id -> completion time (ms)
-- KEYS[10] progress  HASH  id -> JSON progress value of a leased message
-- KEYS[11] cancelled CHANNEL (pub/sub, not a key) that consumers of the topic listen on:
--          a leased message's cancel publishes '<token> <id>' there
-- KEYS[12] priority  HASH  id -> priority level 1-9 (none: level 0)
-- KEYS[13] deferrals HASH  id -> times deferred by retryLater
-- KEYS[14] readyLevels ZSET level -> level: the levels 1-9 whose ready LIST holds ids
-- KEYS[15] ready1     LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[16] ready2     LIST
-- KEYS[17] ready3     LIST
-- KEYS[18] ready4     LIST
-- KEYS[19] ready5     LIST
-- KEYS[20] ready6     LIST
-- KEYS[21] ready7     LIST
-- KEYS[22] ready8     LIST
-- KEYS[23] ready9     LIST
-- KEYS[24] groupQueue    ZSET   grouped messages waiting (prelude-flow.lua has the formats)
-- KEYS[25] groupWaiting  HASH   id -> groupQueue member
-- KEYS[26] groupActive   HASH   id -> group, started until ended
-- KEYS[27] groupSlots    HASH   group -> started messages not ended
-- KEYS[28] groupTurns    ZSET   group -> turn
-- KEYS[29] groupHeld     ZSET   group -> ms its rate limit holds it until
-- KEYS[30] groupSequence STRING counter of group order and turns
-- KEYS[31] limits        HASH   fleet-wide limits
-- KEYS[32] rateWindows   HASH   rate window per topic/group
-- KEYS[33] held          STRING present while rateLimited holds the topic
-- KEYS[34] wake          LIST   wake-up token (for the flow helpers)
-- ARGV[1]  id
-- Returns  the state it was in ('ready', 'delayed', 'leased', 'dead' or 'completed'), or
--          false when no message had this id
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_READY, K_DELAYED, K_LEASED, K_MESSAGES, K_ATTEMPTS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_TOKENS, K_DEAD, K_DEAD_INFO, K_COMPLETED, K_PROGRESS = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local K_CANCELLED, K_PRIORITY, K_DEFERRALS, K_LEVELS = KEYS[11], KEYS[12], KEYS[13], KEYS[14]
use_flow_keys(24)
local id = ARGV[1]
check_types(K_READY, 'list', K_DELAYED, 'zset', K_LEASED, 'zset', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash',
  K_TOKENS, 'hash', K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_COMPLETED, 'zset', K_PROGRESS, 'hash',
  K_PRIORITY, 'hash', K_DEFERRALS, 'hash', K_LEVELS, 'zset')

-- A message removed for good (cancel) leaves its group: out of its queue if it waits there
-- (true then), else its slot freed if it holds one.
local function group_forget(id)
  local member = redis.call('HGET', K_GROUP_WAITING, id)
  if member then
    redis.call('HDEL', K_GROUP_WAITING, id)
    return redis.call('ZREM', K_GROUP_QUEUE, member) == 1
  end
  leases_ended({ id })
  return false
end

local state = false
if redis.call('ZREM', K_COMPLETED, id) == 1 then
  state = 'completed'
elseif redis.call('ZREM', K_DEAD, id) == 1 then
  state = 'dead'
  redis.call('HDEL', K_DEAD_INFO, id)
elseif redis.call('ZREM', K_LEASED, id) == 1 then
  state = 'leased'
  local token = redis.call('HGET', K_TOKENS, id) or ''
  redis.call('HDEL', K_TOKENS, id)
  redis.call('PUBLISH', K_CANCELLED, token .. ' ' .. id)
elseif redis.call('ZREM', K_DELAYED, id) == 1 then
  state = 'delayed'
elseif redis.call('HEXISTS', K_MESSAGES, id) == 1 then
  -- Neither delayed, leased, dead nor completed: in its level's ready LIST (a scan from its head).
  state = 'ready'
  if not group_forget(id) then
    remove_ready(K_READY, K_PRIORITY, K_LEVELS, 15, id)
  end
end
if state and state ~= 'ready' then
  group_forget(id)
end
if state then
  redis.call('HDEL', K_MESSAGES, id)
  redis.call('HDEL', K_ATTEMPTS, id)
  redis.call('HDEL', K_PROGRESS, id)
  redis.call('HDEL', K_PRIORITY, id)
  redis.call('HDEL', K_DEFERRALS, id)
end
return state
