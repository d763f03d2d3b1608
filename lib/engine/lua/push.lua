-- push: stores new messages and makes them ready, or delayed until their due time.
-- A message whose id already exists, in any state, is a duplicate: nothing is changed.
--
-- KEYS[1] messages  HASH  id -> stored body
-- KEYS[2] ready     LIST  ids waiting, head first
-- KEYS[3] delayed   ZSET  id -> due time (ms, server clock)
-- KEYS[4] wake      LIST  wake-up token for blocked consumers
-- ARGV    groups of four, one per message:
--   id           message id
--   body         JSON object text starting with '{"p":'; enqueuedAt is added here as "t"
--   delayMs      milliseconds from now (>= 0)
--   availableAt  earliest due time in epoch ms, or 0
-- Returns  one integer per message: 1 stored, 0 duplicate; then 1 if consumers were woken, else 0
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_MESSAGES, K_READY, K_DELAYED, K_WAKE = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
check_types(K_MESSAGES, 'hash', K_READY, 'list', K_DELAYED, 'zset', K_WAKE, 'list')

local now = now_ms()
local first = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
local earliest = tonumber(first[2])
local results, ready = {}, {}
local must_wake = false

for i = 1, #ARGV, 4 do
  local id = ARGV[i]
  local stored = redis.call('HSETNX', K_MESSAGES, id, '{"t":' .. now .. ',' .. string.sub(ARGV[i + 1], 2))
  results[#results + 1] = stored
  if stored == 1 then
    local due = math.max(now + tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]))
    if due > now then
      redis.call('ZADD', K_DELAYED, due, id)
      -- Consumers sleep until the earliest due time; an earlier one must wake them.
      if earliest == nil or due < earliest then
        earliest = due
        must_wake = true
      end
    else
      ready[#ready + 1] = id
    end
  end
end

if #ready > 0 then
  push_ids('RPUSH', K_READY, ready)
  must_wake = true
end
if must_wake then
  wake(K_WAKE)
end
-- A partitioned topic's consumers wait in its home slot: the caller passes the wake on.
results[#results + 1] = must_wake and 1 or 0
return results
