-- group-weights-set: replaces the weights of a topic's ordered groups (of one partition of it),
-- which the next turns use (prelude-groups.lua, next_turn); none: every group back to weight 1,
-- taking turns round robin. Turns given before stay: a change shows from each group's next turn.
--
-- K.groupWeights K.groupPasses K.groupTurns K.groupSequence K.limits K.groupBlocked K.groupBlockedAt
-- ARGV    pairs: group, weight (none: no weights)
-- Returns 1
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.groupWeights, 'hash', K.groupPasses, 'zset', K.groupTurns, 'zset', K.groupSequence, 'string',
  K.limits, 'hash', K.groupBlocked, 'zset', K.groupBlockedAt, 'hash')

-- The highest turn given so far: weighted turns start after it, and round robin turns too.
local function last_turn()
  local last = redis.call('ZRANGE', K.groupTurns, -1, -1, 'WITHSCORES')[2]
  return tonumber(last) or tonumber(redis.call('GET', K.groupSequence)) or 0
end

redis.call('DEL', K.groupWeights)
if #ARGV == 0 then
  if redis.call('HDEL', K.limits, 'wt') == 1 then
    -- The counter's numbers are round robin's turns: they must come after every weighted one.
    local last = math.ceil(last_turn())
    if last > (tonumber(redis.call('GET', K.groupSequence)) or 0) then
      redis.call('SET', K.groupSequence, string.format('%d', last))
    end
  end
  -- Round robin holds no turn back for a group whose slots are full (prelude-groups.lua, block).
  redis.call('DEL', K.groupPasses, K.groupBlocked, K.groupBlockedAt)
  return 1
end
redis.call('HSET', K.groupWeights, unpack(ARGV))
if redis.call('HSET', K.limits, 'wt', 1) == 1 then
  -- The clock starts after the turns given round robin: each waiting group takes the turn it has,
  -- then the weights share the next ones.
  redis.call('DEL', K.groupPasses)
  redis.call('ZADD', K.groupPasses, last_turn(), '')
end
return 1
