-- extend: moves lease deadlines to now + leaseMs, each only while the given token is
-- still the current lease (the heartbeat of a running handler).
--
-- K.leased K.tokens
-- ARGV[1] leaseMs  new lease length in ms, from now
-- ARGV[2..] pairs: id, token
-- Returns { deadline, flag, ... } with one flag per pair: 1 extended, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.leased, 'zset', K.tokens, 'hash')

local deadline = now_ms() + tonumber(ARGV[1])
local held, flags = held_leases(2)
if #held > 0 then
  local scored = {}
  for _, id in ipairs(held) do
    scored[#scored + 1] = deadline
    scored[#scored + 1] = id
  end
  redis.call('ZADD', K.leased, unpack(scored))
end
table.insert(flags, 1, deadline)
return flags
