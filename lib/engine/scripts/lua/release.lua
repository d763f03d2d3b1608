-- release: hands leased messages back at once, at the head of ready (of their priority level), without counting
-- the interrupted delivery as an attempt (used by a consumer that shuts down).
--
-- K.leased      ZSET   id -> lease deadline (ms)
-- K.ready       LIST   ids waiting, head first
-- K.attempts    HASH   id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- K.tokens      HASH   id -> token of the current lease
-- K.wake        LIST   wake-up token for blocked consumers
-- K.priority    HASH   id -> priority level 1-9
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
-- ARGV    pairs: id, token
-- Returns one integer per pair: 1 released, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.leased, 'zset', K.ready, 'list', K.attempts, 'hash', K.tokens, 'hash', K.wake, 'list',
  K.priority, 'hash', K.readyLevels, 'zset')

local held, results = held_leases(1)
if #held > 0 then
  -- The interrupted attempt was only in the token: attempts keeps the count before it.
  redis.call('ZREM', K.leased, unpack(held))
  redis.call('HDEL', K.tokens, unpack(held))
  make_ready('LPUSH', held)
  wake()
end
return results
