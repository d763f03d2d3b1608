-- stats: counts the messages in each state. Delayed messages already due and leases
-- already expired count as ready: that is what the next reserve will see.
--
-- KEYS[1] ready    LIST  ids waiting
-- KEYS[2] delayed  ZSET  id -> due time (ms)
-- KEYS[3] leased   ZSET  id -> lease deadline (ms)
-- KEYS[4] dead     ZSET  id -> time of death (ms)
-- ARGV    none
-- Returns { ready, delayed, leased, dead }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_READY, K_DELAYED, K_LEASED, K_DEAD = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
check_types(K_READY, 'list', K_DELAYED, 'zset', K_LEASED, 'zset', K_DEAD, 'zset')

local now = now_ms()
local due = redis.call('ZCOUNT', K_DELAYED, '-inf', now)
local expired = redis.call('ZCOUNT', K_LEASED, '-inf', now)
return {
  redis.call('LLEN', K_READY) + due + expired,
  redis.call('ZCARD', K_DELAYED) - due,
  redis.call('ZCARD', K_LEASED) - expired,
  redis.call('ZCARD', K_DEAD),
}
