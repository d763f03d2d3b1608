-- push: stores new messages and makes them ready (at the tail of their priority level), or
-- delayed until their due time. A message whose id already exists, in any state, is a
-- duplicate: nothing is changed. A paused topic is not woken (its consumers lease nothing).
-- A grouped message waits at the tail of its group instead of ready (prelude-flow.lua); a
-- delayed one joins it when due.
--
-- KEYS[1]  messages     HASH  id -> stored body
-- KEYS[2]  ready        LIST  ids waiting at priority 0, head first
-- KEYS[3]  delayed      ZSET  id -> due time (ms, server clock)
-- KEYS[4]  wake         LIST  wake-up token for blocked consumers
-- KEYS[5]  paused       STRING present while the topic is paused
-- KEYS[6]  priority     HASH  id -> priority level 1-9
-- KEYS[7]  readyLevels  ZSET  level -> level, for the levels 1-9 whose ready LIST holds ids
-- KEYS[8]  ready1       LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[9]  ready2       LIST
-- KEYS[10] ready3       LIST
-- KEYS[11] ready4       LIST
-- KEYS[12] ready5       LIST
-- KEYS[13] ready6       LIST
-- KEYS[14] ready7       LIST
-- KEYS[15] ready8       LIST
-- KEYS[16] ready9       LIST
-- KEYS[17] groupQueue    ZSET   grouped messages waiting (prelude-flow.lua has the formats)
-- KEYS[18] groupWaiting  HASH   id -> groupQueue member
-- KEYS[19] groupActive   HASH   id -> group, started until ended
-- KEYS[20] groupSlots    HASH   group -> started messages not ended
-- KEYS[21] groupTurns    ZSET   group -> turn
-- KEYS[22] groupHeld     ZSET   group -> ms its rate limit holds it until
-- KEYS[23] groupSequence STRING counter of group order and turns
-- KEYS[24] limits        HASH   fleet-wide limits
-- KEYS[25] rateWindows   HASH   rate window per topic/group
-- KEYS[26] held          STRING present while rateLimited holds the topic
-- KEYS[27] wake          LIST   wake-up token (for the flow helpers)
-- KEYS[28] counters      HASH   pushed -> messages stored so far (duplicates not counted)
-- ARGV    groups of six, one per message:
--   id           message id
--   body         JSON object text starting with '{"p":'; enqueuedAt is added here as "t"
--   delayMs      milliseconds from now (>= 0)
--   availableAt  earliest due time in epoch ms, or 0
--   priority     0-9, higher is served first
--   group        its ordered group, or '' for none
-- Returns  one integer per message: 1 stored, 0 duplicate; then 1 if consumers were woken, else 0
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_MESSAGES, K_READY, K_DELAYED, K_WAKE = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_PAUSED, K_PRIORITY, K_LEVELS = KEYS[5], KEYS[6], KEYS[7]
local LEVEL_KEYS = 8
local K_COUNTERS = KEYS[28]
use_flow_keys(17)
check_types(K_MESSAGES, 'hash', K_READY, 'list', K_DELAYED, 'zset', K_WAKE, 'list', K_COUNTERS, 'hash')

local now = now_ms()
local first = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
local earliest = tonumber(first[2])
local results, ready, stored_count = {}, {}, 0
local must_wake = false
-- Levels above 0 are checked only when used: a plain push pays nothing for them.
local prioritized = false
for i = 5, #ARGV, 6 do
  if ARGV[i] ~= '0' then
    if not prioritized then
      check_types(K_PRIORITY, 'hash', K_LEVELS, 'zset')
      prioritized = true
    end
    check_types(level_key(K_READY, LEVEL_KEYS, tonumber(ARGV[i])), 'list')
  end
end

local capacity
for i = 6, #ARGV, 6 do
  if ARGV[i] ~= '' and not capacity then
    check_types(K_GROUP_QUEUE, 'zset', K_GROUP_WAITING, 'hash', K_GROUP_SLOTS, 'hash', K_GROUP_TURNS, 'zset',
      K_GROUP_HELD, 'zset', K_GROUP_SEQUENCE, 'string', K_LIMITS, 'hash')
    capacity = tonumber(redis.call('HGET', K_LIMITS, 'gc')) or 1
  end
end

for i = 1, #ARGV, 6 do
  local id = ARGV[i]
  local stored = redis.call('HSETNX', K_MESSAGES, id, '{"t":' .. now .. ',' .. string.sub(ARGV[i + 1], 2))
  results[#results + 1] = stored
  if stored == 1 then
    stored_count = stored_count + 1
    local level = tonumber(ARGV[i + 4])
    if level > 0 then
      redis.call('HSET', K_PRIORITY, id, level)
    end
    local due = math.max(now + tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]))
    local group = ARGV[i + 5]
    if due > now then
      if group ~= '' then
        -- Reserve moves it into its group when due; the member made now keeps its push order.
        redis.call('HSET', K_GROUP_WAITING, id, group_member(group, id))
      end
      redis.call('ZADD', K_DELAYED, due, id)
      -- Consumers sleep until the earliest due time; an earlier one must wake them.
      if earliest == nil or due < earliest then
        earliest = due
        must_wake = true
      end
    elseif group ~= '' then
      group_enqueue(id, group_member(group, id), capacity)
      must_wake = true
    elseif level > 0 then
      local key = level_key(K_READY, LEVEL_KEYS, level)
      redis.call('RPUSH', key, id)
      redis.call('ZADD', K_LEVELS, level, level)
      must_wake = true
    else
      ready[#ready + 1] = id
    end
  end
end

if stored_count > 0 then
  redis.call('HINCRBY', K_COUNTERS, 'pushed', stored_count)
end
if #ready > 0 then
  push_ids('RPUSH', K_READY, ready)
  must_wake = true
end
-- Paused consumers wait for resume's wake-up, not for every push.
if must_wake and redis.call('EXISTS', K_PAUSED) == 1 then
  must_wake = false
end
if must_wake then
  wake(K_WAKE)
end
-- A partitioned topic's consumers wait in its home slot: the caller passes the wake on.
results[#results + 1] = must_wake and 1 or 0
return results
