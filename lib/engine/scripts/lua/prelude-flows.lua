-- Flows (parents that wait for their children), after prelude-levels.lua: how a flow's nodes
-- are stored and released, and how a child's end is recorded for its parent. Its links go as a
-- message ends (prelude-end.lua's flow_forget). Locals only.

-- A held node may start at `due`: one due now goes straight to ready (its level's), unless it
-- is grouped (reserve moves it into its group, at its place); a later one waits in delayed.
-- Returns whether it is ready now.
local function flow_release(id, due, now)
  if due > now or redis.call('HEXISTS', K.groupWaiting, id) == 1 then
    redis.call('ZADD', K.delayed, due, id)
    return false
  end
  redis.call('ZREM', K.delayed, id)
  make_ready('RPUSH', { id })
  return true
end

-- The outbox entries this call wrote (child id, entry, ...): a script that ends flow children
-- returns them, so the engine passes them on without reading the outbox.
local flow_ended = {}

-- A flow's child ended (outcome 'a' acked, with its result; 'f' dead or cancelled, with why):
-- the end waits in the outbox, in the child's own slot, until its parent (maybe in another
-- slot) has heard it (flow-notify.lua, then flow-clear.lua). A later end of the same child
-- (after a requeue) gets a higher sequence, so an older one passed late changes nothing.
local function flow_child_ended(id, outcome, payload)
  local ref = redis.call('HGET', K.flowParents, id)
  if not ref then
    return
  end
  local seq = redis.call('INCR', K.flowSequence)
  local entry = seq .. '\n' .. outcome .. '\n' .. ref .. '\n' .. payload
  redis.call('HSET', K.flowOutbox, id, entry)
  flow_ended[#flow_ended + 1] = id
  flow_ended[#flow_ended + 1] = entry
  redis.call('ZADD', K.flowOutboxDue, now_ms(), id)
end

-- A child's end was heard by its parent: its outbox entry goes, unless a later end of the child
-- (sequence `seq`) replaced it meanwhile (that one is still to be heard). True if it went.
local function outbox_heard(id, seq)
  local entry = redis.call('HGET', K.flowOutbox, id)
  if not entry or string.match(entry, '^(%d+)') ~= seq then
    return false
  end
  redis.call('HDEL', K.flowOutbox, id)
  redis.call('ZREM', K.flowOutboxDue, id)
  return true
end

-- A node of a flow stored (push.lua's flow form), held in K.delayed: a node below the root waits
-- for the root (the commit of its pushFlow), a parent for its children, whose fields start pending.
local function flow_node_stored(id, parent, children, now)
  if parent ~= '' then
    redis.call('HSET', K.flowParents, id, parent)
    redis.call('ZADD', K.flowUncommitted, now, id)
  end
  if children == '' then
    return
  end
  local key = K.flowChildren .. id
  local fields, count = {}, 0
  for line in string.gmatch(children, '[^\n]+') do
    if #fields == 0 then
      fields = { '@', line }
    else
      fields[#fields + 1] = line
      fields[#fields + 1] = 'p'
      count = count + 1
    end
    if #fields >= UNPACK_MAX then
      redis.call('HSET', key, unpack(fields))
      fields = { '#', count }
    end
  end
  fields[#fields + 1] = '#'
  fields[#fields + 1] = count
  fields[#fields + 1] = '!'
  fields[#fields + 1] = 0
  redis.call('HSET', key, unpack(fields))
  redis.call('SADD', K.flowOpen, id)
  redis.call('ZADD', K.flowWaiting, now, id)
end

-- 2 when a process seems to have died mid-way in a flow of this slot, else 0: an outbox entry
-- older than a second (its parent may not have heard it), or the oldest node waiting for its
-- root for 10 to 60 s (a pushFlow cut between its root and its commit; one whose root is still
-- missing after that was cut before the root and is left for its retry) or over an hour (to be
-- dropped). reserve.lua answers it, so consumers sweep (FlowTrees.sweep) only then: two reads a
-- reserve, no command of their own. A read that fails (a foreign key) answers 0.
local function flow_repair_due(now)
  local oldest = redis.pcall('ZRANGE', K.flowOutboxDue, 0, 0, 'WITHSCORES')
  if not oldest.err and oldest[2] and tonumber(oldest[2]) <= now - 1000 then
    return 2
  end
  oldest = redis.pcall('ZRANGE', K.flowUncommitted, 0, 0, 'WITHSCORES')
  local age = not oldest.err and oldest[2] and now - tonumber(oldest[2])
  return age and ((age >= 10000 and age <= 60000) or age > 3600000) and 2 or 0
end

-- Whether any message of this slot belongs to a flow: one read, so a plain topic pays nothing more.
local function flow_used()
  return redis.call('EXISTS', K.flowParents, K.flowOpen) > 0
end
