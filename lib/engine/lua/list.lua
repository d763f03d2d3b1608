-- list: pages through the messages of one state in the order they will be served: ready
-- by priority level (9 first), head first within a level, delayed by due time, leased by deadline, completed newest first.
--
-- KEYS[1] ready     LIST  ids waiting, head first
-- KEYS[2] delayed   ZSET  id -> due time (ms)
-- KEYS[3] leased    ZSET  id -> lease deadline (ms)
-- KEYS[4] messages  HASH  id -> stored body (of a completed message: its completed record)
-- KEYS[5] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[6] tokens    HASH  id -> token of the current lease: <sequence>.<attempt>
-- KEYS[7] completed ZSET  id -> completion time (ms)
-- KEYS[8] readyLevels ZSET level -> level: the levels 1-9 whose ready LIST holds ids
-- KEYS[9] ready1     LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[10] ready2     LIST
-- KEYS[11] ready3     LIST
-- KEYS[12] ready4     LIST
-- KEYS[13] ready5     LIST
-- KEYS[14] ready6     LIST
-- KEYS[15] ready7     LIST
-- KEYS[16] ready8     LIST
-- KEYS[17] ready9     LIST
-- ARGV[1] state   'ready', 'delayed', 'leased' or 'completed'
-- ARGV[2] offset  entries to skip (>= 0)
-- ARGV[3] limit   entries to return (>= 1)
-- Returns { id, score or false, body or false, attempts or token or false, ... } (4 per message;
--         the fourth is the token for leased messages, the attempts count otherwise)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_READY, K_DELAYED, K_LEASED, K_MESSAGES = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_ATTEMPTS, K_TOKENS, K_COMPLETED = KEYS[5], KEYS[6], KEYS[7]
check_types(K_READY, 'list', K_DELAYED, 'zset', K_LEASED, 'zset', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash',
  K_TOKENS, 'hash', K_COMPLETED, 'zset', KEYS[8], 'zset')

local state, first = ARGV[1], tonumber(ARGV[2])
local last = first + tonumber(ARGV[3]) - 1
local ids, scores = {}, {}
if state == 'ready' then
  ids = ready_in_order(K_READY, KEYS[8], 9, first, last - first + 1)
else
  local scored
  if state == 'delayed' then
    scored = redis.call('ZRANGE', K_DELAYED, first, last, 'WITHSCORES')
  elseif state == 'leased' then
    scored = redis.call('ZRANGE', K_LEASED, first, last, 'WITHSCORES')
  else
    scored = redis.call('ZRANGE', K_COMPLETED, first, last, 'REV', 'WITHSCORES')
  end
  for i = 1, #scored, 2 do
    ids[#ids + 1] = scored[i]
    scores[#ids] = scored[i + 1]
  end
end

local out = {}
if #ids == 0 then
  return out
end
local bodies = redis.call('HMGET', K_MESSAGES, unpack(ids))
local key = state == 'leased' and K_TOKENS or K_ATTEMPTS
local extra = redis.call('HMGET', key, unpack(ids))
for i, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = scores[i] or false
  out[#out + 1] = bodies[i] or false
  out[#out + 1] = extra[i] or false
end
return out
