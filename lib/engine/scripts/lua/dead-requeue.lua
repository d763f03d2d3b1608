-- dead-requeue: sends dead letters back to the tail of ready (of their priority level) with their attempts reset:
-- the given ids, or else the oldest `limit` of them after the first `skip`. A dead letter without a body
-- (nothing to deliver) is dropped instead. A flow's parent dead as child-failed stays here and is
-- returned: it may run only after its children, so the caller requeues its failed children first
-- and then sends it back to wait for them (flow-resume.lua; see FlowRequeue).
--
-- K.dead K.deadInfo K.messages K.attempts K.ready K.wake K.priority K.readyLevels K.flowOpen
-- ARGV[1] limit  how many of the oldest to take when no ids follow
-- ARGV[2] skip   how many of the oldest to pass over first (parents left here by earlier calls)
-- ARGV[3..] ids (optional)
-- Returns { ids taken, messages sent back to ready, then the ids of the parents left here }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.dead, 'zset', K.deadInfo, 'hash', K.messages, 'hash', K.attempts, 'hash', K.ready, 'list', K.wake, 'list',
  K.priority, 'hash', K.readyLevels, 'zset', K.flowOpen, 'set')

local ids = { unpack(ARGV, 3) }
if #ids == 0 then
  local skip = tonumber(ARGV[2])
  ids = redis.call('ZRANGE', K.dead, skip, skip + tonumber(ARGV[1]) - 1)
end
local requeued, parents = {}, {}
for _, id in ipairs(ids) do
  if redis.call('ZSCORE', K.dead, id) and child_failed_parent(id) then
    parents[#parents + 1] = id
  elseif dead_letter_back(id) then
    requeued[#requeued + 1] = id
  end
end
if #requeued > 0 then
  make_ready('RPUSH', requeued)
  wake()
end
return { #ids, #requeued, unpack(parents) }
