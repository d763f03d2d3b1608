-- push: stores new messages and makes them ready (at the tail of their priority level), or
-- delayed until their due time. A message whose id already exists, in any state, is a
-- duplicate: nothing is changed. A paused topic is not woken (its consumers lease nothing).
-- A grouped message waits at the tail of its group instead of ready (prelude-groups.lua); a
-- delayed one joins it when due, at the place its push gave it.
--
-- K.messages K.ready K.delayed K.wake K.paused K.priority K.readyLevels K.groupQueue K.groupWaiting K.groups
-- K.groupCount K.groupSlots K.groupTurns K.groupHeld K.groupSequence K.limits K.counters K.flowParents
-- ARGV[1]  '1' when no process of a release before 0.2 runs on the prefix (its stored format is
--          'compact'): grouped messages wait in their groups' ZSETs; '0': in groupQueue, where
--          those releases look (prelude-groups.lua); followed by 'r' ('1r', '0r') when the
--          call carries relay receipts (the outbox relay's): then ARGV ends with one receipt per
--          message ('' for none), after all the messages
-- ARGV[2]  '' when every message is in the short form, else one character per message:
--          's' short form, 'l' long form, 'f' flow form
-- ARGV[3..] per message, short form (ready now at priority 0, no group):
--   id           message id
--   body         the stored body without its enqueue time, which is put before it here: JSON
--                object members '"p":<payload>...}' (after '{"t":<now>,'), or compact
--                '|<payload>' (after <now> in base 36)
-- or long form, the same two and then:
--   delayMs      milliseconds from now (>= 0)
--   availableAt  earliest due time in epoch ms, or 0
--   priority     0-9, higher is served first
--   group        its ordered group, or '' for none
-- or flow form (a node of pushFlow, delayed until FLOW_HELD: flow-commit.lua or flow-notify.lua
-- makes it due), the long form's six and then:
--   parent       its parent's reference (K.flowParents' value), '' for the root
--   children     '' for a leaf; a parent's `<delayMs> <availableAt>`, then a line per child field
-- or either of the last two followed by its extras (shape 'x': long form, 'y': flow form):
--   extras       a start-by deadline, what it becomes once past, tags (prelude-extras.lua)
-- Returns  one integer per message: 1 stored, 0 duplicate (3: a flow node whose id a message outside
--          its flow holds; 4: relayed before, its receipt is in K.relayReceipts: nothing done for
--          it); then 1 if consumers were woken, else 0. A receipt is recorded (score: now) with
--          any other code: the row's effect is decided. Receipts older than RECEIPT_MAX_AGE_MS
--          (leaked by a relay that died between its commit and its forget) are pruned, 100 a call
--          (prelude-receipts.lua).
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>; ACKQ_DEADLINE <index> <option>: a message's
--          deadline does not lie after its due time (nothing is written)
check_types(K.messages, 'hash', K.ready, 'list', K.delayed, 'zset', K.wake, 'list', K.counters, 'hash')

local now = now_ms()
local first = redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
local earliest = tonumber(first[2])
local results, ready, stored_count, grouped_count = {}, {}, 0, 0
-- Written after the loop, one command each: delayed (score, id pairs) and the flow nodes stored.
local delayed, flow_ids, flow_parents, flow_children = {}, {}, {}, {}
local must_wake = false
-- Long-form messages: long[m] is true for message m, and long_at lists where each one's id is.
legacy_groups = string.byte(ARGV[1]) ~= 49
local with_receipts = string.byte(ARGV[1], 2) == 114
local shapes, long, long_at, flow = ARGV[2], {}, {}, {}
-- Messages with extras (shapes 'x' and 'y'): extras[m] read, deadlines[m] its deadline or nil.
local extras, extras_at, deadlines = {}, {}, {}
local count = (#ARGV - 2) / (with_receipts and 3 or 2)
if shapes ~= '' then
  count = #shapes
  local i = 3
  for m = 1, count do
    local shape = string.byte(shapes, m)
    local at = i
    if shape == 102 or shape == 121 then
      long[m], flow[m] = true, true
      long_at[#long_at + 1] = i
      i = i + 8
    elseif shape == 108 or shape == 120 then
      long[m] = true
      long_at[#long_at + 1] = i
      i = i + 6
    else
      i = i + 2
    end
    if shape == 120 or shape == 121 then
      extras[m], extras_at[m] = extras_read(ARGV[i]), at
      i = i + 1
    end
  end
end
-- Relay receipts, checked before anything is written: a message relayed before is left out of
-- every check and write (a second receipt alike in the same call counts as relayed before too).
local receipts, relayed = {}, {}
if with_receipts then
  receipts, relayed = receipts_relayed(#ARGV - count + 1, count)
  for m in pairs(relayed) do
    extras[m] = nil
  end
end

-- Levels above 0 are checked only when used: a plain push pays nothing for them.
local prioritized = false
for _, i in ipairs(long_at) do
  if ARGV[i + 4] ~= '0' then
    if not prioritized then
      check_types(K.priority, 'hash', K.readyLevels, 'zset')
      prioritized = true
    end
    check_types(level_key(tonumber(ARGV[i + 4])), 'list')
  end
end

-- Grouped messages: the flow keys and each group's ZSET checked (which also tells whether the
-- group has messages waiting, so whether it needs a turn).
local capacity
for _, i in ipairs(long_at) do
  local group = ARGV[i + 5]
  if group ~= '' and not capacity then
    check_types(K.groupQueue, 'zset', K.groupWaiting, 'hash', K.groupCount, 'string', K.groupSlots, 'hash', K.groupTurns, 'zset',
      K.groupHeld, 'zset', K.groupSequence, 'string', K.limits, 'hash')
    capacity = group_capacity()
  end
  if group ~= '' and groups_waiting[group] == nil then
    local key = group_key(group)
    local kind = redis.call('TYPE', key)['ok']
    if kind ~= 'none' and kind ~= 'zset' then
      -- The error names keys by words: a group name with a space is named by its prefix.
      error({ err = 'ACKQ_WRONGTYPE ' .. (string.find(key, '%s') and K.groups .. '*' or key) .. ' ' .. kind .. ' zset' })
    end
    groups_waiting[group] = kind == 'zset'
  end
end

-- Deadlines and tags, all checked before the first write: a bad one fails the call unchanged.
if next(extras) then
  extras_check(extras)
  for m, own in pairs(extras) do
    local at = extras_at[m]
    -- A flow's node is held (FLOW_HELD): its deadline is judged against now (prelude-extras.lua).
    local due = flow[m] and now or math.max(now + tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]))
    deadlines[m] = extras_deadline(own, due, m, flow[m])
  end
end

-- Every body gets the same enqueue time: its text is made once, in each form.
local stamp, compact_stamp = body_stamps(now)
local i = 3
for m = 1, count do
  local id = ARGV[i]
  local body = ARGV[i + 1]
  -- A message relayed before (4) is left alone: no branch below takes it.
  local stored = with_receipts and relayed[m] and 4
    or redis.call('HSETNX', K.messages, id, (string.byte(body) == 124 and compact_stamp or stamp) .. body)
  results[m] = stored
  if stored == 1 and not long[m] then
    stored_count = stored_count + 1
    ready[#ready + 1] = id
  elseif stored == 1 then
    stored_count = stored_count + 1
    local level = tonumber(ARGV[i + 4])
    if level > 0 then
      redis.call('HSET', K.priority, id, level)
    end
    local due = math.max(now + tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]))
    local group = ARGV[i + 5]
    if due > now then
      if group ~= '' then
        -- Reserve moves it into its group when due; the member made now keeps its push order.
        redis.call('HSET', K.groupWaiting, id, group_member(group, id))
      end
      delayed[#delayed + 1] = string.format('%d', due)
      delayed[#delayed + 1] = id
      -- Consumers sleep until the earliest due time; an earlier one must wake them.
      if earliest == nil or due < earliest then
        earliest = due
        must_wake = true
      end
    elseif group ~= '' then
      grouped_count = grouped_count + group_enqueue(group, id, string.format('%d', group_sequence()), capacity)
      must_wake = true
    elseif level > 0 then
      local key = level_key(level)
      redis.call('RPUSH', key, id)
      redis.call('ZADD', K.readyLevels, level, level)
      must_wake = true
    else
      ready[#ready + 1] = id
    end
    if extras[m] then
      extras_stored(id, extras[m], deadlines[m], now)
    end
    if flow[m] then
      flow_ids[#flow_ids + 1] = id
      flow_parents[#flow_parents + 1] = ARGV[i + 6]
      flow_children[#flow_children + 1] = ARGV[i + 7]
    end
  elseif stored == 0 and flow[m] and ARGV[i + 6] ~= '' and redis.call('HGET', K.flowParents, id) ~= ARGV[i + 6] then
    results[m] = 3
  end
  i = (flow[m] and i + 8 or long[m] and i + 6 or i + 2) + (extras_at[m] and 1 or 0)
end

-- Score and id pairs, split at UNPACK_MAX (even).
push_ids('ZADD', K.delayed, delayed)
if next(extras) then
  extras_flush()
end
if #flow_ids > 0 then
  flow_nodes_stored(flow_ids, flow_parents, flow_children, now)
end
if stored_count > 0 then
  redis.call('HINCRBY', K.counters, 'pushed', stored_count)
end
if grouped_count > 0 then
  redis.call('INCRBY', K.groupCount, grouped_count)
end
if #ready > 0 then
  push_ids('RPUSH', K.ready, ready)
  must_wake = true
end
if with_receipts then
  receipts_record(receipts, now)
end
results[#results + 1] = woken_by_push(must_wake) and 1 or 0
return results
