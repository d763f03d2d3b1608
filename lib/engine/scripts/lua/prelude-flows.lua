-- Flows (parents that wait for their children), after prelude-levels.lua: how a flow's nodes
-- are stored and released, and how a child's end is recorded for its parent. Its links go as a
-- message ends (prelude-end.lua's flow_forget). Locals only.

-- Held nodes that may start: ids[i] at dues[i]. One due now goes straight to ready (its
-- level's), unless it is grouped (reserve moves it into its group, at its place); a later one
-- waits in delayed. A few commands for all of them, none per node (one EXISTS more for start-by
-- deadlines). Returns how many are ready now.
local function flow_release(ids, dues, now)
  local grouped = {}
  if redis.call('EXISTS', K.groupWaiting) == 1 then
    grouped = redis.call('HMGET', K.groupWaiting, unpack(ids))
  end
  local later, ready = {}, {}
  for i, id in ipairs(ids) do
    if dues[i] > now or grouped[i] then
      later[#later + 1] = string.format('%d', dues[i])
      later[#later + 1] = id
    else
      ready[#ready + 1] = id
    end
  end
  -- A node's start-by deadline given as expiresInMs counts from now, as it becomes due: stored
  -- unanchored ('r<ms>', push.lua), it becomes due + ms here and joins reserve's sweep.
  if redis.call('EXISTS', K.deadlines) == 1 then
    local marks, anchored, swept = redis.call('HMGET', K.deadlines, unpack(ids)), {}, {}
    for i, id in ipairs(ids) do
      local ms, rest = string.match(marks[i] or '', '^r(%d+)(.*)$')
      if ms then
        local at = string.format('%d', dues[i] + tonumber(ms))
        anchored[#anchored + 1] = id
        anchored[#anchored + 1] = at .. rest
        swept[#swept + 1] = at
        swept[#swept + 1] = id
      end
    end
    push_ids('HSET', K.deadlines, anchored)
    push_ids('ZADD', K.expiring, swept)
  end
  -- Due time and id pairs, split at UNPACK_MAX (even).
  push_ids('ZADD', K.delayed, later)
  if #ready > 0 then
    push_ids('ZREM', K.delayed, ready)
    make_ready('RPUSH', ready)
  end
  return #ready
end

-- The outbox entries this call wrote (child id, entry, ...): a script that ends flow children
-- returns them, so the engine passes them on without reading the outbox.
local flow_ended = {}

-- Flow children ended (outcome 'a' acked, with its result; 'f' dead or cancelled, with why;
-- payloads[i] for ids[i]): each end waits in the outbox, in the child's own slot, until its
-- parent (maybe in another slot) has heard it (flow-notify.lua, then flow-clear.lua). A later
-- end of the same child (after a requeue) gets a higher sequence, so an older one passed late
-- changes nothing. Ids without a parent are left out. A few commands per call, none per child.
local function flow_children_ended(ids, outcome, payloads)
  local refs = redis.call('HMGET', K.flowParents, unpack(ids))
  local children, entries = {}, {}
  for i, id in ipairs(ids) do
    if refs[i] then
      children[#children + 1] = id
      entries[#entries + 1] = i
    end
  end
  if #children == 0 then
    return
  end
  local first = redis.call('INCRBY', K.flowSequence, #children) - #children
  local now = string.format('%d', now_ms())
  local outbox, due = {}, {}
  for k, id in ipairs(children) do
    local i = entries[k]
    local entry = string.format('%d', first + k) .. '\n' .. outcome .. '\n' .. refs[i] .. '\n' .. payloads[i]
    outbox[#outbox + 1] = id
    outbox[#outbox + 1] = entry
    due[#due + 1] = now
    due[#due + 1] = id
    flow_ended[#flow_ended + 1] = id
    flow_ended[#flow_ended + 1] = entry
  end
  push_ids('HSET', K.flowOutbox, outbox)
  push_ids('ZADD', K.flowOutboxDue, due)
end

-- A flow child ended (see flow_children_ended).
local function flow_child_ended(id, outcome, payload)
  flow_children_ended({ id }, outcome, { payload })
end

-- Children's ends were heard by their parents (ids[i] the end of sequence seqs[i]): their outbox
-- entries go, each unless a later end of its child replaced it meanwhile (that one is still to be
-- heard). Returns how many went.
local function outbox_heard(ids, seqs)
  local entries = redis.call('HMGET', K.flowOutbox, unpack(ids))
  local heard = {}
  for i, id in ipairs(ids) do
    local entry = entries[i]
    if entry and string.match(entry, '^(%d+)') == seqs[i] then
      heard[#heard + 1] = id
    end
  end
  if #heard > 0 then
    redis.call('HDEL', K.flowOutbox, unpack(heard))
    redis.call('ZREM', K.flowOutboxDue, unpack(heard))
  end
  return #heard
end

-- Nodes of flows stored (push.lua's flow form: ids[i] with parents[i], its parent's reference
-- or '' for a root, and children[i], '' for a leaf), held in K.delayed: a node below the root
-- waits for the root (the commit of its pushFlow), a parent for its children, whose fields start
-- pending. The links of all of them go in a few commands; a parent's HASH is one HSET of its own.
local function flow_nodes_stored(ids, parents, children, now)
  local links, uncommitted, open, waiting = {}, {}, {}, {}
  local stamp = string.format('%d', now)
  for i, id in ipairs(ids) do
    if parents[i] ~= '' then
      links[#links + 1] = id
      links[#links + 1] = parents[i]
      uncommitted[#uncommitted + 1] = stamp
      uncommitted[#uncommitted + 1] = id
    end
    if children[i] ~= '' then
      local key = K.flowChildren .. id
      local fields, count = {}, 0
      for line in string.gmatch(children[i], '[^\n]+') do
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
      open[#open + 1] = id
      waiting[#waiting + 1] = stamp
      waiting[#waiting + 1] = id
    end
  end
  -- Pairs (field and value, score and member) split at UNPACK_MAX, which is even.
  push_ids('HSET', K.flowParents, links)
  push_ids('ZADD', K.flowUncommitted, uncommitted)
  push_ids('SADD', K.flowOpen, open)
  push_ids('ZADD', K.flowWaiting, waiting)
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
