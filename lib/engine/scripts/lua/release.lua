-- release: hands leased messages back at once, at the head of ready (of their priority level), without counting
-- the interrupted delivery as an attempt (used by a consumer that shuts down).
--
-- K.leased K.ready K.attempts K.tokens K.wake K.priority K.readyLevels
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
