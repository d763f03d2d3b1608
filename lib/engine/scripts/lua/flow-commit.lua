-- flow-commit: the flow's root is stored, so its nodes in this slot stop waiting for it: a
-- leaf becomes due (now + its delayMs, or its availableAt: ready at once when that is now), a
-- parent goes on waiting for its children. Run again for the same ids (a retried pushFlow, the sweep) it changes nothing.
--
-- K.delayed         ZSET   id -> due time (ms); FLOW_HELD while a node waits
-- K.wake            LIST   wake-up token for blocked consumers
-- K.paused          STRING present while the topic is paused
-- K.flowParents     HASH   child id -> its parent, the flow's root, its own delay (JSON)
-- K.flowUncommitted ZSET   id -> time stored, of flow nodes whose root is not stored yet
-- K.flowWaiting     ZSET   parent id -> since when it waits for its children
-- K.ready           LIST   ids waiting at priority 0, head first
-- K.priority        HASH   id -> priority level 1-9
-- K.readyLevels     ZSET   level -> level, for the levels 1-9 whose ready LIST holds ids
-- K.ready1          LIST   ids waiting at priority 1 (and so on up to ready9)
-- K.ready2          LIST
-- K.ready3          LIST
-- K.ready4          LIST
-- K.ready5          LIST
-- K.ready6          LIST
-- K.ready7          LIST
-- K.ready8          LIST
-- K.ready9          LIST
-- K.groupWaiting    HASH   id -> '<group>\0<sequence>\0<id>' of a delayed grouped message
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
