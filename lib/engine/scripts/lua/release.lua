-- release: hands leased messages back at once, at the head of ready (of their priority level), without counting
-- the interrupted delivery as an attempt (used by a consumer that shuts down). They keep their
-- start-by deadlines: back in K.expiring, for reserve's sweep and start check.
--
-- K.leased K.ready K.attempts K.tokens K.wake K.priority K.readyLevels K.deadlines K.expiring
-- ARGV    pairs: id, token
-- Returns one integer per pair: 1 released, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.leased, 'zset', K.ready, 'list', K.attempts, 'hash', K.tokens, 'hash', K.wake, 'list',
  K.priority, 'hash', K.readyLevels, 'zset')

local held, results = held_leases(1)
if #held > 0 then
  -- Read before any write: they keep their start-by deadlines (a foreign key fails the call here).
  local deadlines, args = redis.call('HMGET', K.deadlines, unpack(held)), {}
  for i, id in ipairs(held) do
    if deadlines[i] then
      args[#args + 1] = string.match(deadlines[i], '^%d+')
      args[#args + 1] = id
    end
  end
  if #args > 0 then
    check_types(K.expiring, 'zset')
  end
  -- The interrupted attempt was only in the token: attempts keeps the count before it.
  redis.call('ZREM', K.leased, unpack(held))
  redis.call('HDEL', K.tokens, unpack(held))
  runs_ended_if_any(held)
  make_ready('LPUSH', held)
  push_ids('ZADD', K.expiring, args)
  wake()
end
return results
