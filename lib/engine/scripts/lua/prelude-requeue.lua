-- Dead letters sent back to wait (dead-requeue.lua, a bulk requeue): after prelude.lua. Locals
-- only; it needs no other prelude.

-- A parent that went to the dead letters because a child failed, whose children are still
-- recorded: it may run only after them, so its caller requeues its failed children first and then
-- sends it back to wait for them (flow-resume.lua; see FlowRequeue).
local function child_failed_parent(id)
  if redis.call('SISMEMBER', K.flowOpen, id) == 0 then
    return false
  end
  local ok, info = pcall(cjson.decode, redis.call('HGET', K.deadInfo, id) or '')
  return ok and type(info) == 'table' and info.r == 'child-failed'
end

-- Takes a dead letter out of the dead letters with what it kept as one (reason, attempts), so it
-- starts over. Returns true when it has a body to deliver (the caller makes it ready); one without
-- (nothing to deliver) is dropped, its priority with it. nil when it was no dead letter.
local function dead_letter_back(id)
  if redis.call('ZREM', K.dead, id) == 0 then
    return nil
  end
  redis.call('HDEL', K.deadInfo, id)
  redis.call('HDEL', K.attempts, id)
  if redis.call('HEXISTS', K.messages, id) == 1 then
    return true
  end
  redis.call('HDEL', K.priority, id)
  return false
end
