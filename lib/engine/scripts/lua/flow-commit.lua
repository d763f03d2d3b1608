-- flow-commit: the flow's root is stored, so its nodes in this slot stop waiting for it: a
-- leaf becomes due (now + its delayMs, or its availableAt: ready at once when that is now), a
-- parent goes on waiting for its children. Run again for the same ids (a retried pushFlow, the sweep) it changes nothing.
--
-- K.delayed K.wake K.paused K.flowParents K.flowUncommitted K.flowWaiting K.ready K.priority K.readyLevels
-- ARGV  ids of this slot's nodes of one flow
-- Returns 1 if a leaf became due (consumers were woken, unless paused), else 0
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.delayed, 'zset', K.flowParents, 'hash', K.flowUncommitted, 'zset', K.flowWaiting, 'zset', K.ready, 'list',
  K.priority, 'hash', K.readyLevels, 'zset')

local now = now_ms()
local released = false
for _, id in ipairs(ARGV) do
  if redis.call('ZREM', K.flowUncommitted, id) == 1 and not redis.call('ZSCORE', K.flowWaiting, id) then
    local score = redis.call('ZSCORE', K.delayed, id)
    local ref = redis.call('HGET', K.flowParents, id)
    if score == FLOW_HELD and ref then
      local link = cjson.decode(ref)
      flow_release(id, math.max(now + link[8], link[9]), now)
      released = true
    end
  end
end
if released and redis.call('EXISTS', K.paused) == 0 then
  wake()
  return 1
end
return 0
