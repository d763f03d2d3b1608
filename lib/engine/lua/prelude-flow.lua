-- Ordered groups and fleet-wide limits, after prelude.lua. Locals only; the scripts that use it
-- take the FLOW_CONTROL_KEYS (queue-keys.ts) and K.wake.
--
-- A grouped message waits in groupQueue, a ZSET whose scores are all 0 and whose members
-- '<group>\0<sequence>\0<id>' sort each group's messages in push order, so a group's head is one
-- range read away however many groups there are; groupWaiting maps its id to that member. Once
-- started it holds one of its group's slots (groupActive id -> group, groupSlots group -> count)
-- through its retries, until it is acked, dead or cancelled. groupTurns (group -> turn) holds
-- the groups that can start a message now, served lowest turn first (round robin); groupHeld
-- (group -> ms) the groups a rate limit holds. limits holds the fleet-wide limits (fields c,
-- rm/rw, gm/gw, gc), rateWindows the starts counted in the current window ('' is the topic).

-- The next number of the groups' counter (message order, turns), taken 1000 at a time: numbers
-- need only rise from one call to the next, and a command per number cost more than a turn.
local sequence_next, sequence_last = 1, 0
local function group_sequence()
  if sequence_next > sequence_last then
    sequence_last = redis.call('INCRBY', K.groupSequence, 1000)
    sequence_next = sequence_last - 999
  end
  sequence_next = sequence_next + 1
  return sequence_next - 1
end

-- The member of a group's oldest waiting message, or nil.
local function group_head(group)
  return redis.call('ZRANGE', K.groupQueue, '(' .. group .. '\0', '(' .. group .. '\1', 'BYLEX', 'LIMIT', 0, 1)[1]
end

-- The fleet-wide limits: a table of the numbers set (none on a plain topic).
local function flow_limits()
  local fields, limits = redis.call('HGETALL', K.limits), {}
  for i = 1, #fields, 2 do
    limits[fields[i]] = tonumber(fields[i + 1])
  end
  return limits
end

-- Whether any group is held (read once per call; true once this call holds one).
local groups_held
local function any_group_held()
  if groups_held == nil then
    groups_held = redis.call('EXISTS', K.groupHeld) == 1
  end
  return groups_held
end

-- Gives `group` a turn at the tail of the rotation if its head can start now; true if it did.
-- A caller that knows the group's slots in use, or that it has a waiting message, passes them.
local function offer_turn(group, capacity, slots, waiting)
  if (slots or tonumber(redis.call('HGET', K.groupSlots, group)) or 0) >= capacity then
    return false
  end
  if any_group_held() and redis.call('ZSCORE', K.groupHeld, group) then
    return false
  end
  if not waiting and not group_head(group) then
    return false
  end
  return redis.call('ZADD', K.groupTurns, 'NX', group_sequence(), group) == 1
end

-- A new member for a message at the tail of its group.
local function group_member(group, id)
  return group .. '\0' .. string.format('%015d', group_sequence()) .. '\0' .. id
end

-- Makes a message wait in its group (its member made by group_member) and offers the group a turn.
local function group_enqueue(id, member, capacity)
  redis.call('ZADD', K.groupQueue, 0, member)
  redis.call('HSET', K.groupWaiting, id, member)
  offer_turn(string.match(member, '^([^%z]*)%z'), capacity, nil, true)
end

-- Whether leases_ended woke consumers (of this partition: the caller wakes a partitioned topic's home).
local flow_woke = false

-- A lease ended (its message is no longer counted by globalConcurrency): wakes the consumers
-- that found no slot (flow_room marked them waiting). True if it woke them.
local function concurrency_freed()
  if redis.call('HDEL', K.limits, 'waiting') == 1 then
    wake()
    flow_woke = true
    return true
  end
  return false
end

-- Called with the ids whose lease or life ended (prelude-settle.lua, cancel): frees their group
-- slots and wakes consumers held by a concurrency limit.
local function leases_ended(ids)
  if redis.call('EXISTS', K.groupActive, K.limits) == 0 then
    return
  end
  local groups = redis.call('HMGET', K.groupActive, unpack(ids))
  local capacity
  local turned = false
  for i, group in ipairs(groups) do
    if group then
      capacity = capacity or tonumber(redis.call('HGET', K.limits, 'gc')) or 1
      redis.call('HDEL', K.groupActive, ids[i])
      local slots = redis.call('HINCRBY', K.groupSlots, group, -1)
      if slots <= 0 then
        redis.call('HDEL', K.groupSlots, group)
      end
      turned = offer_turn(group, capacity, slots) or turned
    end
  end
  -- A group got its turn back, or consumers wait for a slot of globalConcurrency.
  if not concurrency_freed() and turned then
    wake()
    flow_woke = true
  end
end

-- The starts counted in the current fixed window of `per_ms` (aligned to the server clock) of
-- `field`, and when that window began.
local function rate_used(field, per_ms, now)
  local window = now - now % per_ms
  local start, used = string.match(redis.call('HGET', K.rateWindows, field) or '', '^(%d+):(%d+)$')
  return tonumber(start) == window and tonumber(used) or 0, window
end

-- Counts `n` starts in the current window of `field`.
local function rate_use(field, per_ms, now, n)
  local used, window = rate_used(field, per_ms, now)
  redis.call('HSET', K.rateWindows, field, string.format('%d:%d', window, used + n))
end

-- Starts up to `count` grouped messages, one per turn, lowest turn first; a group over its
-- rate is held until its window ends. Returns the ids started.
local function start_grouped(count, limits, now)
  local ids = {}
  local capacity = limits.gc or 1
  while #ids < count do
    local turns = redis.call('ZPOPMIN', K.groupTurns, count - #ids)
    if #turns == 0 then
      break
    end
    for i = 1, #turns, 2 do
      local group = turns[i]
      local member = group_head(group)
      local used, window = 0, 0
      if member and limits.gm then
        used, window = rate_used(group, limits.gw, now)
      end
      if member and limits.gm and used >= limits.gm then
        groups_held = true
        redis.call('ZADD', K.groupHeld, window + limits.gw, group)
      elseif member then
        local id = string.match(member, '^[^%z]*%z%d+%z(.*)$')
        redis.call('ZREM', K.groupQueue, member)
        redis.call('HDEL', K.groupWaiting, id)
        redis.call('HSET', K.groupActive, id, group)
        local slots = redis.call('HINCRBY', K.groupSlots, group, 1)
        if limits.gm then
          rate_use(group, limits.gw, now, 1)
        end
        ids[#ids + 1] = id
        offer_turn(group, capacity, slots)
      end
    end
  end
  return ids
end

-- Groups whose hold ended get their turn back (at most `max_moves`).
local function release_held_groups(now, max_moves, capacity)
  local groups = redis.call('ZRANGE', K.groupHeld, '-inf', now, 'BYSCORE', 'LIMIT', 0, max_moves)
  if #groups > 0 then
    redis.call('ZREMRANGEBYRANK', K.groupHeld, 0, #groups - 1)
    for _, group in ipairs(groups) do
      offer_turn(group, capacity)
    end
  end
end

-- Due ids that wait for their group's turn (a delayed grouped push) join it; returns the others.
local function enqueue_due_grouped(ids, capacity)
  if redis.call('EXISTS', K.groupWaiting) == 0 then
    return ids
  end
  local members = redis.call('HMGET', K.groupWaiting, unpack(ids))
  local rest = {}
  for i, id in ipairs(ids) do
    if members[i] then
      group_enqueue(id, members[i], capacity)
    else
      rest[#rest + 1] = id
    end
  end
  return rest
end

-- How many of `count` may start under the topic's hold and fleet-wide limits, and when the one
-- that stops them opens (math.huge: none does, or a concurrency limit, whose end an ack wakes).
local function flow_room(count, limits, now)
  local hold = redis.call('PTTL', K.held)
  if hold > 0 then
    return 0, now + hold
  end
  local room, opens = count, math.huge
  if limits.c then
    room = math.max(math.min(room, limits.c - redis.call('ZCARD', K.leased)), 0)
    if room == 0 then
      redis.call('HSET', K.limits, 'waiting', 1)
    end
  end
  if limits.rm then
    local used, window = rate_used('', limits.rw, now)
    if limits.rm - used < room then
      room, opens = math.max(limits.rm - used, 0), window + limits.rw
    end
  end
  return room, opens
end
