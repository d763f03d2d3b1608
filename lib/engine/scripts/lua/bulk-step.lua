-- bulk-step: one step of a bulk action in one partition, atomic: the next `count` ids of its
-- snapshot leave it, each one still in the selected state is acted on, the others are passed
-- over (skipped), and the partition's progress counts them all. An id leaves the snapshot only
-- here, in the call that acts on it: however many runners step, each id is acted on once, and
-- none after an abort (bulk-abort.lua deletes the snapshot).
--   requeue (dead): back to the tail of ready (of its priority level), attempts reset, as
--     dead-requeue.lua does; a flow's parent dead as child-failed is returned instead, for the
--     caller to requeue with its failed children (FlowRequeue)
--   purge (dead, completed): deleted for good
--   cancel (any state): as cancel.lua does
--
-- K.bulk K.bulkIds K.dead K.deadInfo K.completed K.flowOpen K.flowWaiting K.wake
-- ARGV[1]  bulk id
-- ARGV[2]  action: 'requeue', 'purge' or 'cancel'
-- ARGV[3]  the state it selected
-- ARGV[4]  how many ids to take (1-1000)
-- ARGV[5]  ttl (ms) of the snapshot and progress, renewed here
-- Returns  { acted, skipped, ids left in the snapshot, outbox entries written (child id, entry:
--          a cancelled flow child's, for the caller to pass on), flow parents left dead for the
--          caller to requeue, children of cancelled parents to cancel in turn (their fields) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
cancel_check_types()
check_types(K.flowOpen, 'set', K.flowWaiting, 'zset', K.wake, 'list')
local bulk_id, action, state = ARGV[1], ARGV[2], ARGV[3]
local snapshot = K.bulkIds .. bulk_id
local key = snapshot
local ids = redis.call('ZRANGE', key, 0, tonumber(ARGV[4]) - 1)
if #ids == 0 then
  return { 0, 0, 0, {}, {}, {} }
end
redis.call('ZREM', key, unpack(ids))

-- Whether `id` is (still) in `state`: where it waits now. A flow's parent waiting for its
-- children sits in K.delayed too, at a score no due time reaches.
local function in_state(id)
  if state == 'dead' then
    return redis.call('ZSCORE', K.dead, id) ~= false
  elseif state == 'completed' then
    return redis.call('ZSCORE', K.completed, id) ~= false
  elseif state == 'leased' then
    return redis.call('ZSCORE', K.leased, id) ~= false
  elseif state == 'waiting-children' then
    return redis.call('ZSCORE', K.flowWaiting, id) ~= false
  elseif state == 'delayed' then
    return redis.call('ZSCORE', K.delayed, id) ~= false and not redis.call('ZSCORE', K.flowWaiting, id)
  end
  return redis.call('HEXISTS', K.messages, id) == 1
    and not redis.call('ZSCORE', K.delayed, id)
    and not redis.call('ZSCORE', K.leased, id)
    and not redis.call('ZSCORE', K.dead, id)
    and not redis.call('ZSCORE', K.completed, id)
end

-- A parent that went to the dead letters because a child failed, whose children are still recorded.
local function child_failed_parent(id)
  if redis.call('SISMEMBER', K.flowOpen, id) == 0 then
    return false
  end
  local ok, info = pcall(cjson.decode, redis.call('HGET', K.deadInfo, id) or '')
  return ok and type(info) == 'table' and info.r == 'child-failed'
end

local acted, skipped = 0, 0
local requeued, purged, parents, children = {}, {}, {}, {}
for _, id in ipairs(ids) do
  if not in_state(id) then
    skipped = skipped + 1
  elseif action == 'requeue' then
    acted = acted + 1
    if child_failed_parent(id) then
      parents[#parents + 1] = id
    else
      redis.call('ZREM', K.dead, id)
      redis.call('HDEL', K.deadInfo, id)
      redis.call('HDEL', K.attempts, id)
      if redis.call('HEXISTS', K.messages, id) == 1 then
        requeued[#requeued + 1] = id
      else
        redis.call('HDEL', K.priority, id)
      end
    end
  elseif action == 'purge' then
    acted = acted + 1
    if state == 'dead' then
      redis.call('ZREM', K.dead, id)
    else
      redis.call('ZREM', K.completed, id)
    end
    purged[#purged + 1] = id
  else
    acted = acted + 1
    local reply = cancel_message(id, false)
    for i = 3, #reply do
      children[#children + 1] = reply[i]
    end
  end
end
if #requeued > 0 then
  make_ready('RPUSH', requeued)
  wake()
end
if #purged > 0 then
  records_purged(purged)
end

key = K.bulk .. bulk_id
redis.call('HINCRBY', key, 'p', #ids)
if skipped > 0 then
  redis.call('HINCRBY', key, 's', skipped)
end
redis.call('PEXPIRE', key, ARGV[5])
key = snapshot
local left = redis.call('ZCARD', key)
if left > 0 then
  redis.call('PEXPIRE', key, ARGV[5])
end
return { acted, skipped, left, flow_ended, parents, children }
