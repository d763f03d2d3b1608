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
local held, flags = held_leases(K_TOKENS, 2)
if #held > 0 then
  local scored = {}
  for _, id in ipairs(held) do
    scored[#scored + 1] = deadline
    scored[#scored + 1] = id
  end
  redis.call('ZADD', K_LEASED, unpack(scored))
end
table.insert(flags, 1, deadline)
return flags
