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
-- Read for all ids at once: which still wait for their root, which of those are held leaves.
local ids = {}
for i, held in ipairs(redis.call('ZMSCORE', K.flowUncommitted, unpack(ARGV))) do
  if held then
    ids[#ids + 1] = ARGV[i]
  end
end
if #ids == 0 then
  return 0
end
redis.call('ZREM', K.flowUncommitted, unpack(ids))
local waiting = redis.call('ZMSCORE', K.flowWaiting, unpack(ids))
local scores = redis.call('ZMSCORE', K.delayed, unpack(ids))
local refs = redis.call('HMGET', K.flowParents, unpack(ids))
local leaves, dues = {}, {}
for i, id in ipairs(ids) do
  if not waiting[i] and scores[i] == FLOW_HELD and refs[i] then
    local link = cjson.decode(refs[i])
    leaves[#leaves + 1] = id
    dues[#dues + 1] = math.max(now + link[8], link[9])
  end
end
if #leaves == 0 then
  return 0
end
flow_release(leaves, dues, now)
if redis.call('EXISTS', K.paused) == 0 then
  wake()
  return 1
end
return 0
