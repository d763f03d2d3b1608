-- limits-set: replaces the fleet-wide limits of a topic (of one partition of it), which every
-- reserve reads, and wakes a blocked consumer: a limit may have opened. The starts in the rate
-- windows stay, so a changed limit counts them; without a rate limit they go. The mark of group
-- weights (wt) stays while the topic has weights, and that of group quotas (qt) while it has
-- quotas. Limits set by hand (setLimits) carry the mark h; a consumer that declares none withdraws
-- the others (those its predecessors declared in code), never these.
--
-- K.limits K.wake K.rateLog K.rateLast K.rateWindows K.groupWeights K.groupQuotas
-- ARGV[1] by     'hand' (setLimits), 'code' (a consumer's declared limits) or 'withdraw' (a
--                consumer that declares none: removes the limits unless set by hand)
-- ARGV[2..] pairs: field, value (none: no limit at all)
-- Returns 1, or 0 when 'withdraw' found none or left limits set by hand
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.limits, 'hash', K.wake, 'list', K.rateLog, 'zset', K.rateLast, 'zset', K.groupWeights, 'hash',
  K.groupQuotas, 'hash')

local by = ARGV[1]
if by == 'withdraw' then
  -- Nothing to withdraw (every consumer start without limits comes here): no write, no wake-up.
  local set = redis.call('HMGET', K.limits, 'h', 'c', 'rm', 'gm', 'gc')
  if set[1] or not (set[2] or set[3] or set[4] or set[5]) then
    return 0
  end
end
redis.call('DEL', K.limits, K.rateWindows)
local keep_ms = 0
for i = 2, #ARGV, 2 do
  if ARGV[i] == 'rw' or ARGV[i] == 'gw' then
    keep_ms = math.max(keep_ms, tonumber(ARGV[i + 1]))
  end
end
if #ARGV > 1 then
  redis.call('HSET', K.limits, unpack(ARGV, 2))
  if by == 'hand' then
    redis.call('HSET', K.limits, 'h', 1)
  end
end
if redis.call('EXISTS', K.groupWeights) == 1 then
  redis.call('HSET', K.limits, 'wt', 1)
end
-- So is the mark of group quotas (qt: their longest window, perMs plus its dispatch allowance).
if redis.call('EXISTS', K.groupQuotas) == 1 then
  local per = 0
  local fields = redis.call('HGETALL', K.groupQuotas)
  for i = 1, #fields, 2 do
    -- Its quotas only ('q' fields), not the groups' state kept beside them (prelude-quotas.lua).
    if string.byte(fields[i]) == 113 then
      per = math.max(per, tonumber(string.match(fields[i + 1], '^%d+ (%d+)')) or 0)
    end
  end
  redis.call('HSET', K.limits, 'qt', per + math.ceil(per * 2 / 100))
end
-- The starts are kept as long as the longest window now in use (reserve renews it).
if keep_ms > 0 then
  redis.call('PEXPIRE', K.rateLog, keep_ms)
  redis.call('PEXPIRE', K.rateLast, keep_ms)
else
  redis.call('DEL', K.rateLog, K.rateLast)
end
wake()
return 1
