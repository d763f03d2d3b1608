-- stats: counts the messages in each state. Delayed messages already due and leases
-- already expired count as ready: that is what the next reserve will see.
--
-- KEYS[1] ready    LIST  ids waiting
-- KEYS[2] delayed  ZSET  id -> due time (ms)
-- KEYS[3] leased   ZSET  id -> lease deadline (ms)
-- KEYS[4] dead     ZSET  id -> time of death (ms)
-- KEYS[5] paused   STRING present while the topic is paused
-- KEYS[6] readyLevels ZSET level -> level, for the levels 1-9 whose ready LIST holds ids
-- KEYS[7] ready1     LIST  ids waiting at priority 1 (and so on up to ready9)
-- KEYS[8] ready2     LIST
-- KEYS[9] ready3     LIST
-- KEYS[10] ready4    LIST
-- KEYS[11] ready5    LIST
-- KEYS[12] ready6    LIST
-- KEYS[13] ready7    LIST
-- KEYS[14] ready8    LIST
-- KEYS[15] ready9    LIST
-- KEYS[16] groupQueue ZSET grouped messages waiting for their group's turn (they count as ready)
-- ARGV    none
-- Returns { ready (every level), delayed, leased, dead, paused (1 or 0) }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_READY, K_DELAYED, K_LEASED, K_DEAD, K_PAUSED, K_LEVELS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local LEVEL_KEYS, K_GROUP_QUEUE = 7, KEYS[16]
check_types(K_READY, 'list', K_DELAYED, 'zset', K_LEASED, 'zset', K_DEAD, 'zset', K_LEVELS, 'zset')

local now = now_ms()
local due = redis.call('ZCOUNT', K_DELAYED, '-inf', now)
local expired = redis.call('ZCOUNT', K_LEASED, '-inf', now)
return {
  ready_count(K_READY, K_LEVELS, LEVEL_KEYS, K_GROUP_QUEUE) + due + expired,
  redis.call('ZCARD', K_DELAYED) - due,
  redis.call('ZCARD', K_LEASED) - expired,
  redis.call('ZCARD', K_DEAD),
  redis.call('EXISTS', K_PAUSED),
}
