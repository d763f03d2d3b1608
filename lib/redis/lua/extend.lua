-- extend: moves lease deadlines to now + leaseMs, each only while the given token is
-- still the current lease (the heartbeat of a running handler).
--
-- KEYS[1] leased  ZSET  id -> lease deadline (ms)
-- KEYS[2] tokens  HASH  id -> token of the current lease
-- ARGV[1] leaseMs  new lease length in ms, from now
-- ARGV[2..] pairs: id, token
-- Returns { deadline, flag, ... } with one flag per pair: 1 extended, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LEASED, K_TOKENS = KEYS[1], KEYS[2]
check_types(K_LEASED, 'zset', K_TOKENS, 'hash')

local deadline = now_ms() + tonumber(ARGV[1])
local results = { deadline }
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HGET', K_TOKENS, id) == ARGV[i + 1] then
    redis.call('ZADD', K_LEASED, deadline, id)
    results[#results + 1] = 1
  else
    results[#results + 1] = 0
  end
end
return results
