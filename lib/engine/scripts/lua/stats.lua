-- stats: counts the messages in each state. Delayed messages already due and leases
-- already expired count as ready: that is what the next reserve will see.
--
-- K.ready       LIST   ids waiting
-- K.delayed     ZSET   id -> due time (ms)
-- K.leased      ZSET   id -> lease deadline (ms)
-- K.dead        ZSET   id -> time of death (ms)
-- K.paused      STRING present while the topic is paused
-- K.readyLevels ZSET   level -> level, for the levels 1-9 whose ready LIST holds ids
-- K.ready1      LIST   ids waiting at priority 1 (and so on up to ready9)
-- K.ready2      LIST
-- K.ready3      LIST
-- K.ready4      LIST
-- K.ready5      LIST
-- K.ready6      LIST
-- K.ready7      LIST
-- K.ready8      LIST
-- K.ready9      LIST
-- K.groupQueue  ZSET   grouped messages an earlier version left waiting (they count as ready)
-- K.groupCount  STRING grouped messages waiting in their groups' ZSETs (they count as ready)
-- K.flowWaiting ZSET   parent id -> since when it waits for its children
-- ARGV    none
-- Returns { ready (every level), delayed, leased, dead, paused (1 or 0), waiting for children (a
--         flow's parents, held in delayed and not counted there) }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.dead, 'zset', K.readyLevels, 'zset')

local now = now_ms()
local due = redis.call('ZCOUNT', K.delayed, '-inf', now)
local expired = redis.call('ZCOUNT', K.leased, '-inf', now)
local waiting = redis.call('ZCARD', K.flowWaiting)
return {
  ready_count() + due + expired,
  redis.call('ZCARD', K.delayed) - due - waiting,
  lease_count() - expired,
  redis.call('ZCARD', K.dead),
  redis.call('EXISTS', K.paused),
  waiting,
}
