-- Cancel, after prelude-end.lua, prelude-levels.lua, prelude-groups.lua and prelude-key-modes.lua:
-- removes one message for good, whatever its state, with every key that holds something of it
-- (cancel.lua, and bulk-step.lua's cancel). A leased one loses its token (its late ack or nack
-- changes nothing) and its id is published on the cancelled channel, so the consumer running it
-- aborts its handler. A leased one of a supersede key holds its key as a superseded one does: the
-- key's next message starts once its consumer's refused ack says the handler returned, or at its
-- deadline. Locals only.

-- The types of the keys a cancel touches; once per script.
local function cancel_check_types()
  check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash',
    K.tokens, 'hash', K.dead, 'zset', K.deadInfo, 'hash', K.completed, 'zset', K.progress, 'hash',
    K.priority, 'hash', K.deferrals, 'hash', K.readyLevels, 'zset')
  check_types(K.stepIds, 'set')
end

-- A message waiting for its first start in its group leaves it: out of its group's ZSET (or an
-- earlier version's groupQueue), out of groupWaiting if delayed. True if it waited in a group
-- (not in a ready LIST). A started one's slot is freed as it ends (prelude-end.lua).
local function group_leave(id, state)
  local member = redis.call('HGET', K.groupWaiting, id)
  if member then
    redis.call('HDEL', K.groupWaiting, id)
    return redis.call('ZREM', K.groupQueue, member) == 1
  end
  local group = state == 'ready' and body_group(redis.call('HGET', K.messages, id))
  local key = group and group_key(group)
  if key and redis.call('ZREM', key, id) == 1 then
    -- Its group keeps its turn, if it had one: a turn whose group is empty is dropped when served.
    group_count_add(-1)
    return true
  end
  return false
end

-- A running message of a supersede key, cancelled: its handler may run on until its lease's
-- deadline, so it drains as push-keyed.lua's supersede_running leaves a superseded one (its
-- key kept in K.keyOf until its consumer's refused ack, key_drained, or the deadline), and a
-- message waiting for it starts no sooner. Returns 'drain' then; nil for any other message,
-- which leaves its key at once as it ends.
local function key_cancelled_running(id, deadline)
  local value = redis.call('HGET', K.keyOf, id)
  local mode = value and string.sub(value, 1, 1)
  if mode ~= 'c' and mode ~= 'k' then
    return nil
  end
  local field = 's' .. string.sub(value, 2)
  local s = supersede_state(field)
  -- The state may still name a started message as the waiting one (push-keyed.lua moves it on).
  if s.cur == id then
    s.cur = ''
  elseif s.next == id then
    s.next = ''
  else
    return nil
  end
  drain_over(s)
  s.drain, s.drain_until = id, deadline
  if s.next ~= '' and redis.call('ZSCORE', K.delayed, s.next) == KEY_PARKED then
    key_release(s.next, math.max(s.next_due, deadline), now_ms())
  end
  supersede_save(field, s)
  return 'drain'
end

-- Cancels `id` (live_only: a parent's cancel reaching its children, a message that has ended,
-- dead or completed, is left as it is). Returns false when no message had this id (or it was
-- left), else { the state it was in, the outbox entries written (the global flow_ended: one
-- table for every cancel of the script), then the children of a flow's parent that had not ended }.
local function cancel_message(id, live_only)
  local state = false
  local key = nil
  local deadline = tonumber(redis.call('ZSCORE', K.leased, id))
  if live_only and (redis.call('ZSCORE', K.completed, id) or redis.call('ZSCORE', K.dead, id)) then
    return false
  end
  if redis.call('ZREM', K.completed, id) == 1 then
    state = 'completed'
  elseif redis.call('ZREM', K.dead, id) == 1 then
    state = 'dead'
  elseif deadline then
    state = 'leased'
    redis.call('ZREM', K.leased, id)
    local token = redis.call('HGET', K.tokens, id) or ''
    redis.call('PUBLISH', K.cancelled, token .. ' ' .. id)
    key = key_cancelled_running(id, deadline)
  elseif redis.call('ZREM', K.delayed, id) == 1 then
    state = 'delayed'
  elseif redis.call('HEXISTS', K.messages, id) == 1 then
    -- Neither delayed, leased, dead nor completed: in its level's ready LIST (a scan from its head).
    state = 'ready'
    if not group_leave(id, state) then
      remove_ready(id)
    end
  end
  if state and state ~= 'ready' then
    group_leave(id, state)
  end
  -- flow_ended is filled as message_cancelled tells a child's parent (below), before the reply goes.
  local reply = state and { state, flow_ended }
  if state and flow_used() then
    -- A parent's children that have not ended are cancelled in turn by the caller; a child's
    -- cancel counts as its failure.
    if redis.call('ZSCORE', K.flowWaiting, id) then
      reply[1] = 'waiting-children'
    end
    local key = K.flowChildren .. id
    local children = redis.call('HGETALL', key)
    for i = 1, #children, 2 do
      -- Maybe not ended: pending, or failed, whose field keeps that failure until its next end
      -- though it was requeued since (with its parent, flow-resume.lua, or by itself); the
      -- caller's cancel of each, live only, leaves one still dead as it is.
      local value = children[i + 1]
      if value == 'p' or string.match(value, '^%d+\nff') then
        reply[#reply + 1] = children[i]
      end
    end
  end
  if state then
    message_cancelled(id, state, key)
  end
  return reply
end
