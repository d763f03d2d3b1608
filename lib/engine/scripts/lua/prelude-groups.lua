-- Ordered groups, after prelude-limits.lua (a group's rate limit and groupConcurrency are read
-- there). Locals only.
--
-- A grouped message waits for its first start in its group's own ZSET, `K.groups .. group`
-- (id -> push sequence), so a group's head is one pop away and costs the same however many groups
-- there are; groupCount counts them all (stats). A delayed one keeps '<group>\0<sequence>\0<id>'
-- in groupWaiting until due, then joins its group at the place its push sequence gives it. Once
-- started it holds one of its group's slots (groupActive id -> group, groupSlots group -> count)
-- through its retries, until it ends (prelude-end.lua frees it). groupTurns (group -> turn) holds the
-- groups that can start a message now, served lowest turn first (round robin, or weighted: see
-- next_turn): a group whose ZSET holds messages has a turn unless its slots are full or its rate
-- limit holds it (groupHeld, group -> ms). groupQueue (scores 0, members '<group>\0<sequence>\0<id>')
-- is where earlier versions kept waiting messages: each group's oldest one there moves into its
-- ZSET, sequence kept, before the group starts one.

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

-- What a delayed grouped message keeps in groupWaiting until due: its group and its place.
local function group_member(group, id)
  return group .. '\0' .. string.format('%015d', group_sequence()) .. '\0' .. id
end

-- The group a stored body names ("g"), or nil (a compact body has none): for a message that
-- leaves its group other than by its turn (cancelled, expired).
local function body_group(body)
  if not body or string.sub(body, 1, 1) ~= '{' then
    return nil
  end
  local ok, decoded = pcall(cjson.decode, body)
  return ok and type(decoded) == 'table' and type(decoded.g) == 'string' and decoded.g or nil
end

-- The ZSET of a group's messages waiting for their first start.
local function group_key(group)
  return K.groups .. group
end

-- Whether a key exists, read once per call (groupQueue, groupHeld: asked per group); a call
-- that adds to one says so with `filled[key] = true`.
local filled = {}
local function key_filled(key)
  if filled[key] == nil then
    filled[key] = redis.call('EXISTS', key) == 1
  end
  return filled[key]
end

-- The groupQueue member of a group's oldest message an earlier version left waiting, or nil.
local function legacy_head(group)
  if not key_filled(K.groupQueue) then
    return nil
  end
  return redis.call('ZRANGE', K.groupQueue, '(' .. group .. '\0', '(' .. group .. '\1', 'BYLEX', 'LIMIT', 0, 1)[1]
end

-- Whether the topic's groups have weights (setGroupWeights): nil until this call read it with
-- the limits (their field wt), so a topic without weights pays no command for them.
local weighted

-- groupActive and groupSlots are read and written by field at every start and end: a field
-- longer than any id or group name (at most 256 characters) keeps each in Redis's hashtable
-- encoding, where a field costs O(1) instead of a scan of the compact one. Written with every
-- start, deleted with the last real field (unpin_if_empty).
local GROUP_PIN = string.rep('-', 257)

-- Deletes a pinned hash left with its pin only.
local function unpin_if_empty(key)
  if redis.call('HLEN', key) == 1 and redis.call('HEXISTS', key, GROUP_PIN) == 1 then
    redis.call('DEL', key)
  end
end

-- Adds `n` (may be negative) to groupCount, which goes when it reaches 0.
local function group_count_add(n)
  if redis.call('INCRBY', K.groupCount, n) <= 0 then
    redis.call('DEL', K.groupCount)
  end
end

-- Whether a group has a message waiting for its first start.
local function group_waits(group)
  return redis.call('EXISTS', group_key(group)) == 1 or legacy_head(group) ~= nil
end

-- Whether the groups have quotas (setGroupQuotas), read with the limits like `weighted`.
local quoted

-- groupConcurrency (1 when unset), read with the marks of weights and quotas in one command.
local function group_capacity()
  local fields = redis.call('HMGET', K.limits, 'gc', 'wt', 'qt')
  weighted = fields[2] ~= false
  quoted = fields[3] ~= false
  if weighted then
    check_types(K.groupWeights, 'hash', K.groupPasses, 'zset', K.groupBlocked, 'zset', K.groupBlockedAt, 'hash')
  end
  return tonumber(fields[1]) or 1
end

-- The fleet-wide limits (topic_limits) with whether the groups have weights noted, so a turn
-- reads nothing more for them.
local function group_limits()
  local limits = topic_limits()
  weighted = limits.wt ~= nil
  quoted = limits.qt ~= nil
  if weighted then
    check_types(K.groupWeights, 'hash', K.groupPasses, 'zset', K.groupBlocked, 'zset', K.groupBlockedAt, 'hash')
  end
  return limits
end

-- Weighted fair share is stride scheduling in groupTurns. groupPasses holds '' -> the virtual
-- clock (the highest turn started so far; group names are never empty) and group -> the turn
-- its next one starts from, turn + TURN_STRIDE / weight of its last start, while it is ahead
-- of the clock. A group offered a turn gets max(its pass, the clock): a backlogged group of
-- weight w takes a turn every TURN_STRIDE / w of virtual time; a group that was idle joins at
-- the clock, with nothing banked. Without weights a turn is the next number of the counter: the
-- tail of the rotation.
local TURN_STRIDE = 1000

-- The group that just started a message in a weighted turn, and its next turn (turn_taken):
-- start_grouped offers it that turn at once, without reading it back.
local taken_group, taken_next

-- The turn a group offered a turn gets.
local function next_turn(group)
  if weighted == nil then
    group_capacity()
  end
  if not weighted then
    return group_sequence()
  end
  if group == taken_group then
    return taken_next
  end
  local scores = redis.call('ZMSCORE', K.groupPasses, '', group)
  local clock, pass = tonumber(scores[1]), tonumber(scores[2])
  if not clock then
    return pass or group_sequence()
  end
  return math.max(clock, pass or clock)
end

-- A weighted group started a message in `turn`: its next turn comes TURN_STRIDE / weight later,
-- and the clock moves up to `turn`.
local function turn_taken(group, turn)
  local weight = tonumber(redis.call('HGET', K.groupWeights, group)) or 1
  taken_group, taken_next = group, turn + TURN_STRIDE / weight
  redis.call('ZADD', K.groupPasses, 'GT', turn, '', taken_next, group)
end

-- Weighted, a group whose slots are all running while it still has messages waiting is blocked:
-- groupBlocked (group -> its next turn) and groupBlockedAt (group -> ms since). No turn after the
-- lowest blocked one starts until that group's message ends, so the groups not running cannot
-- take its turns: at groupConcurrency 1 the shares follow the weights, not the handlers'
-- durations, and a batch or prefetch reserve hands out no turn the weights did not give. A
-- group blocked for longer than a lease (hold_ms, set by reserve) holds nobody back any more:
-- a stuck handler does not stop the other groups for longer than that.
local hold_ms = 0
-- The lowest blocked turn as this call knows it ({ group, turn }; false: none; nil: not read),
-- and when the hold that stopped this call's starts lapses (nil: none stopped them).
local blocked_first, held_until

-- (block writes both keys, unblock deletes from both: a group in neither costs only the ZREM.)
local function unblock(groups)
  if redis.call('ZREM', K.groupBlocked, unpack(groups)) > 0 then
    redis.call('HDEL', K.groupBlockedAt, unpack(groups))
  end
end

local function block(group, turn, now)
  redis.call('ZADD', K.groupBlocked, turn, group)
  redis.call('HSET', K.groupBlockedAt, group, string.format('%d', now))
  if blocked_first == false or (blocked_first and turn < blocked_first[2]) then
    blocked_first = { group, turn }
  end
end

-- Whether a blocked group's turn comes before `turn` (and holds it back).
local function turn_held(turn, now)
  while true do
    if blocked_first == nil then
      local first = redis.call('ZRANGE', K.groupBlocked, 0, 0, 'WITHSCORES')
      blocked_first = first[1] ~= nil and { first[1], tonumber(first[2]) }
    end
    if not blocked_first or blocked_first[2] >= turn then
      return false
    end
    local since = tonumber(redis.call('HGET', K.groupBlockedAt, blocked_first[1]))
    if since and now - since < hold_ms then
      held_until = since + hold_ms
      return true
    end
    unblock({ blocked_first[1] })
    blocked_first = nil
  end
end

-- Gives `group` a turn at the tail of the rotation if its head can start now; true if it did.
-- A caller that knows the group's slots in use, or that it has a waiting message, passes them.
local function offer_turn(group, capacity, slots, waiting)
  if (slots or tonumber(redis.call('HGET', K.groupSlots, group)) or 0) >= capacity then
    return false
  end
  if key_filled(K.groupHeld) and redis.call('ZSCORE', K.groupHeld, group) then
    return false
  end
  if not waiting and not group_waits(group) then
    return false
  end
  return redis.call('ZADD', K.groupTurns, 'NX', next_turn(group), group) == 1
end

-- Appends to `out` those of groups[first..last] whose ZSET holds messages: one EXISTS for all of
-- them, asked again half by half only while some hold messages and some do not.
local function groups_filled(groups, first, last, out)
  local keys = {}
  for i = first, last do
    keys[#keys + 1] = group_key(groups[i])
  end
  local found = redis.call('EXISTS', unpack(keys))
  if found == #keys then
    for i = first, last do
      out[#out + 1] = groups[i]
    end
  elseif found > 0 then
    local middle = math.floor((first + last) / 2)
    groups_filled(groups, first, middle, out)
    groups_filled(groups, middle + 1, last, out)
  end
end

-- Gives those of `groups` (each with a slot free) that have a message waiting their turn at the
-- tail of the rotation, unless a rate limit holds them; without weights only. A few commands for
-- all of them, not a few per group. True if one got a turn.
local function turns_back(groups)
  if #groups > 0 and key_filled(K.groupHeld) then
    local held, free = redis.call('ZMSCORE', K.groupHeld, unpack(groups)), {}
    for i = 1, #groups do
      if not held[i] then
        free[#free + 1] = groups[i]
      end
    end
    groups = free
  end
  local waiting = {}
  if key_filled(K.groupQueue) then
    -- What an earlier version left waiting is asked about group by group.
    for _, group in ipairs(groups) do
      if group_waits(group) then
        waiting[#waiting + 1] = group
      end
    end
  elseif #groups > 0 then
    groups_filled(groups, 1, #groups, waiting)
  end
  if #waiting == 0 then
    return false
  end
  -- One turn for all: they ended together, and a tie is served in name order (a number each
  -- would cost a formatting each).
  local turn = string.format('%d', group_sequence())
  local args = { 'NX' }
  for i = 1, #waiting do
    args[#args + 1] = turn
    args[#args + 1] = waiting[i]
  end
  return redis.call('ZADD', K.groupTurns, unpack(args)) > 0
end

-- Pops the `count` lowest turns, without weights: their groups only, in two commands (a number in
-- a reply costs the server a float's formatting each, more than a command).
local function turns_pop(count)
  local groups = redis.call('ZRANGE', K.groupTurns, 0, count - 1)
  if #groups > 0 then
    redis.call('ZREMRANGEBYRANK', K.groupTurns, 0, #groups - 1)
  end
  return groups
end

-- Group -> whether its ZSET holds messages, as this call found (or made) it: a group gets its
-- turn when its ZSET is created (one that holds messages has one already, or is full or held:
-- see above). Push fills it as it checks the keys' types.
local groups_waiting = {}

-- While a process of a release before 0.2 may run on the prefix (its stored format is not yet
-- 'compact': stored-format.ts), grouped messages wait where those releases look for them, in
-- groupQueue with groupWaiting beside it, and this release serves them from there (legacy_move).
-- Set by the script that makes messages wait (push, reserve) from its arguments.
local legacy_groups = false

-- Makes a message wait in its group at the place `sequence` (its text) gives it; returns how many
-- the caller adds to groupCount (1, or 0 in groupQueue).
local function group_enqueue(group, id, sequence, capacity)
  if legacy_groups then
    local member = group .. '\0' .. string.format('%015d', tonumber(sequence)) .. '\0' .. id
    redis.call('ZADD', K.groupQueue, 0, member)
    redis.call('HSET', K.groupWaiting, id, member)
    filled[K.groupQueue] = true
    offer_turn(group, capacity, nil, true)
    return 0
  end
  local key = group_key(group)
  local waits = groups_waiting[group]
  if waits == nil then
    waits = redis.call('EXISTS', key) == 1
  end
  groups_waiting[group] = true
  redis.call('ZADD', key, sequence, id)
  if not waits then
    offer_turn(group, capacity, nil, true)
  end
  return 1
end

-- Moves a group's oldest message left in groupQueue by an earlier version into the group's ZSET,
-- its sequence kept (so its place among the newer ones): the lowest left there is always older
-- than anything it could be passed by. Returns 1 if one moved, else 0.
local function legacy_move(group)
  local member = legacy_head(group)
  if not member then
    return 0
  end
  local sequence, id = string.match(member, '^[^%z]*%z(%d+)%z(.*)$')
  redis.call('ZREM', K.groupQueue, member)
  redis.call('HDEL', K.groupWaiting, id)
  redis.call('ZADD', group_key(group), sequence, id)
  return 1
end
-- Starts up to `count` grouped messages, one per turn, lowest turn first; a group at its rate
-- is held until its first start in the window leaves it. A turn whose group has nothing left
-- (its messages were cancelled) is dropped. Returns the ids started.
local function start_grouped(count, limits, now)
  local ids, active, moved = {}, { GROUP_PIN, '1' }, 0
  local capacity = limits.gc or 1
  local clock
  -- Asked once: a group's oldest message an earlier version left there moves first.
  local legacy = key_filled(K.groupQueue)
  while #ids < count and not held_until do
    local turns, groups
    if weighted then
      -- Weighted, a group's next turn may come before the others' popped with it: one at a time.
      turns = redis.call('ZPOPMIN', K.groupTurns, 1)
      if #turns > 0 and turn_held(tonumber(turns[2]), now) then
        redis.call('ZADD', K.groupTurns, turns[2], turns[1])
        break
      end
      groups = { turns[1] }
    else
      groups = turns_pop(count - #ids)
    end
    if #groups == 0 then
      break
    end
    local slots = redis.call('HMGET', K.groupSlots, unpack(groups))
    local slot_args = { GROUP_PIN, '1' }
    for i, group in ipairs(groups) do
      local used_slots = (tonumber(slots[i]) or 0) + 1
      -- A turn of a group whose slots are full (one given by hand, see docs/upgrading.md) is
      -- dropped: the group's next end gives it back.
      local head = nil
      if used_slots <= capacity then
        if legacy then
          moved = moved + legacy_move(group)
        end
        local key = group_key(group)
        -- Held until its rate limit's window opens, then until its quota's (prelude-quotas.lua).
        local hold = nil
        if limits.gm and redis.call('EXISTS', key) == 1 then
          local used, opens = rate_window(group, rate_span(limits.gw), now)
          hold = used >= limits.gm and opens or nil
        end
        if not hold then
          local popped = redis.call('ZPOPMIN', key)
          head = popped[1]
          -- Only a group with a message to start reads its quota: one held puts it back.
          hold = head and limits.qt and quota_hold(group, now)
          if hold then
            redis.call('ZADD', key, popped[2], head)
            head = nil
            quota_held(group, hold, limits.qt)
          end
        end
        if hold then
          filled[K.groupHeld] = true
          redis.call('ZADD', K.groupHeld, hold, group)
        end
      end
      if head then
        ids[#ids + 1] = head
        active[#active + 1] = head
        active[#active + 1] = group
        slot_args[#slot_args + 1] = group
        slot_args[#slot_args + 1] = used_slots == 1 and '1' or string.format('%d', used_slots)
        if limits.gm then
          rate_record(group, now, 1, rate_keep_ms(limits))
        end
        if limits.qt then
          quota_started(group, now, limits.qt)
        end
        if weighted then
          clock = tonumber(turns[2 * i])
          turn_taken(group, clock)
        end
        if used_slots < capacity then
          offer_turn(group, capacity, used_slots)
        elseif weighted and group_waits(group) then
          block(group, taken_next, now)
        end
        taken_group = nil
      end
    end
    -- Written before the next pop: a group offered a turn again reads its slots from here.
    if #slot_args > 2 then
      redis.call('HSET', K.groupSlots, unpack(slot_args))
    end
  end
  if #active > 2 then
    redis.call('HSET', K.groupActive, unpack(active))
  end
  if limits.qt then
    quota_flush()
  end
  if moved ~= #ids then
    group_count_add(moved - #ids)
  end
  -- Passes the clock reached tell nothing more: a group offered a turn gets the clock anyway.
  if clock then
    redis.call('ZREMRANGEBYSCORE', K.groupPasses, '-inf', '(' .. string.format('%.17g', clock))
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

-- Due ids that wait for their group's turn (a delayed grouped push) join it at their push
-- sequence's place; returns the others.
local function enqueue_due_grouped(ids, capacity)
  if redis.call('EXISTS', K.groupWaiting) == 0 then
    return ids
  end
  local members = redis.call('HMGET', K.groupWaiting, unpack(ids))
  local rest, joined = {}, {}
  for i, id in ipairs(ids) do
    local group, sequence = string.match(members[i] or '', '^([^%z]*)%z(%d+)%z')
    if group and legacy_groups then
      -- Its member stays in groupWaiting, where releases before 0.2 look for it.
      redis.call('ZADD', K.groupQueue, 0, members[i])
      filled[K.groupQueue] = true
      offer_turn(group, capacity, nil, true)
    elseif group then
      group_enqueue(group, id, sequence, capacity)
      joined[#joined + 1] = id
    else
      rest[#rest + 1] = id
    end
  end
  if #joined > 0 then
    redis.call('HDEL', K.groupWaiting, unpack(joined))
    group_count_add(#joined)
  end
  return rest
end
