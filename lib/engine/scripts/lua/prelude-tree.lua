-- Flows: how the end of a flow's child or parent is recorded, after prelude-levels.lua and before
-- prelude-settle.lua. A script that takes the flow keys (K.flowParents set) calls these; locals only.

-- The score (2^53 - 1, past any due time a Date can hold) of a flow node that waits in K.delayed
-- for something other than time: a parent for its children, a child for its flow's root to be
-- stored (pushFlow under way). Never due.
local FLOW_HELD = '9007199254740991'

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

-- Ranks first..last of K.delayed (WITHSCORES) as `list` shows delayed messages: the flow nodes held
-- at FLOW_HELD left out (a due time written past it by hand stays listed after them).
local function delayed_page(first, last)
  local held_from = redis.call('ZCOUNT', K.delayed, '-inf', '(' .. FLOW_HELD)
  local held = redis.call('ZCOUNT', K.delayed, FLOW_HELD, FLOW_HELD)
  local page = {}
  if last < first then
    return page
  end
  if first < held_from then
    page = redis.call('ZRANGE', K.delayed, first, math.min(last, held_from - 1), 'WITHSCORES')
  end
  if last >= held_from then
    for _, entry in ipairs(redis.call('ZRANGE', K.delayed, math.max(first, held_from) + held, last + held, 'WITHSCORES')) do
      page[#page + 1] = entry
    end
  end
  return page
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
  -- A dead child keeps its parent: a requeue may still end it well.
  if outcome == 'a' then
    redis.call('HDEL', K.flowParents, id)
  end
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
    if #fields >= 1000 then
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

-- Messages gone for good (acked, cancelled, a dead letter dropped): a parent's children and
-- their results go with it, a child's link to its parent too.
local function flow_forget(ids)
  for _, id in ipairs(ids) do
    if redis.call('SREM', K.flowOpen, id) == 1 then
      local key = K.flowChildren .. id
      redis.call('DEL', key)
      redis.call('ZREM', K.flowWaiting, id)
    end
  end
  if #ids > 0 then
    redis.call('HDEL', K.flowParents, unpack(ids))
    redis.call('ZREM', K.flowUncommitted, unpack(ids))
  end
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
  return K.flowParents ~= nil and redis.call('EXISTS', K.flowParents, K.flowOpen) > 0
end
