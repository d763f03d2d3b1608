-- The end of a message, after prelude-groups.lua, prelude-flows.lua and prelude-key-modes.lua:
-- the only code that deletes what a message holds beside where it waits, for each way it ends
-- (acked, completed, cancelled, dead, purged). A new kind of per-message state is deleted here
-- once, in lived_forget (while it lives) or records_purged (a record kept after its end), and
-- state most topics never have costs one EXISTS. Where a message waits (ready, delayed, leased,
-- its group's ZSET) is left by the script that moves it out. Locals only.

-- Durable steps (context.step): one EXISTS when no message of the topic (partition) has steps,
-- else their HASHes `<K.steps><id>` (derived here, in the partition's hash tag) and their ids in
-- K.stepIds.
local function steps_forget(ids)
  if #ids == 0 or redis.call('EXISTS', K.stepIds) == 0 then
    return
  end
  for _, id in ipairs(ids) do
    if redis.call('SREM', K.stepIds, id) == 1 then
      local key = K.steps .. id
      redis.call('DEL', key)
    end
  end
end

-- Start-by deadlines (push's startBy, expiresInMs): callers ask once whether the topic has any.
local function deadline_forget(ids)
  push_ids('HDEL', K.deadlines, ids)
  push_ids('ZREM', K.expiring, ids)
end

-- Tags: each id's entry in its tags' indexes (one ZREM per tag per call; a tag's ZSET goes with
-- its last member), then its tags. Callers ask once whether the topic has any.
local function tags_forget(ids)
  for i = 1, #ids, UNPACK_MAX do
    local chunk = { unpack(ids, i, math.min(i + UNPACK_MAX - 1, #ids)) }
    local by_tag, order = {}, {}
    for k, text in ipairs(redis.call('HMGET', K.tags, unpack(chunk))) do
      if text then
        for tag in string.gmatch(text, '[^%z]+') do
          if not by_tag[tag] then
            by_tag[tag] = {}
            order[#order + 1] = tag
          end
          by_tag[tag][#by_tag[tag] + 1] = chunk[k]
        end
      end
    end
    for _, tag in ipairs(order) do
      redis.call('ZREM', K.tagIndex .. tag, unpack(by_tag[tag]))
    end
    redis.call('HDEL', K.tags, unpack(chunk))
  end
end

-- Flow links: a parent's children and their results, a child's link to its parent (a dead child
-- keeps it: a requeue may still end it well). Callers ask flow_used first: one EXISTS when the
-- slot has no flow. A few commands per call, more only for the parents among the ids.
local function flow_forget(ids)
  if #ids == 0 then
    return
  end
  local open = {}
  for i, member in ipairs(redis.call('SMISMEMBER', K.flowOpen, unpack(ids))) do
    if member == 1 then
      open[#open + 1] = ids[i]
    end
  end
  if #open > 0 then
    local keys = {}
    for i, id in ipairs(open) do
      keys[i] = K.flowChildren .. id
    end
    redis.call('SREM', K.flowOpen, unpack(open))
    redis.call('DEL', unpack(keys))
    redis.call('ZREM', K.flowWaiting, unpack(open))
  end
  redis.call('HDEL', K.flowParents, unpack(ids))
  redis.call('ZREM', K.flowUncommitted, unpack(ids))
end

-- Key modes: an ended message leaves its key: a debounce
-- key forgets its pending message, a supersede key's waiting message may start once the one
-- it waited for ended, and a key with no message left is removed.
local function keys_ended(ids)
  if #ids == 0 or redis.call('EXISTS', K.keyOf) == 0 then
    return
  end
  local now
  local keyed = redis.call('HMGET', K.keyOf, unpack(ids))
  for i, value in ipairs(keyed) do
    if value then
      local id = ids[i]
      redis.call('HDEL', K.keyOf, id)
      local mode, key = string.sub(value, 1, 1), string.sub(value, 2)
      if mode == 'd' then
        local field = 'd' .. key
        if key_fields(redis.call('HGET', K.keyModes, field) or '')[1] == id then
          redis.call('HDEL', K.keyModes, field)
        end
      elseif mode == 'c' or mode == 'k' then
        local field = 's' .. key
        local s = supersede_state(field)
        if s.cur == id then
          s.cur = ''
          if s.next ~= '' and redis.call('ZSCORE', K.delayed, s.next) == KEY_PARKED then
            now = now or now_ms()
            key_release(s.next, math.max(s.next_due, s.drain_until), now)
          end
        elseif s.next == id then
          s.next = ''
          -- A cancelled predecessor whose handler may still run keeps holding the key (a next
          -- push waits for it); once its deadline passed (as when this one started), forgotten.
          now = now or now_ms()
          if s.drain_until <= now then
            drain_over(s)
          end
        end
        supersede_save(field, s)
      end
    end
  end
end

-- Group slots: frees the ended messages' slots (one read and one write of groupSlots per call,
-- not per id), gives their groups a turn and wakes consumers held by a concurrency limit.
local function leases_ended(ids)
  if redis.call('EXISTS', K.groupActive, K.limits) == 0 then
    return
  end
  local groups = redis.call('HMGET', K.groupActive, unpack(ids))
  local ended, freed, order = {}, {}, {}
  for i, group in ipairs(groups) do
    if group then
      ended[#ended + 1] = ids[i]
      if not freed[group] then
        order[#order + 1] = group
        freed[group] = 0
      end
      freed[group] = freed[group] + 1
    end
  end
  local turned = false
  if #ended > 0 then
    local capacity = group_capacity()
    if quoted then
      runs_ended(ended, now_ms())
    end
    redis.call('HDEL', K.groupActive, unpack(ended))
    if weighted then
      -- Its turn (kept in groupPasses) is offered below: the turns it held back come after it.
      unblock(order)
    end
    local slots = redis.call('HMGET', K.groupSlots, unpack(order))
    local kept, gone, back = {}, {}, {}
    for i, group in ipairs(order) do
      local left = (tonumber(slots[i]) or 0) - freed[group]
      if left > 0 then
        kept[#kept + 1] = group
        kept[#kept + 1] = string.format('%d', left)
      else
        gone[#gone + 1] = group
      end
      if weighted then
        turned = offer_turn(group, capacity, math.max(left, 0)) or turned
      elseif left < capacity then
        back[#back + 1] = group
      end
    end
    turned = turns_back(back) or turned
    if #kept > 0 then
      redis.call('HSET', K.groupSlots, unpack(kept))
    end
    if #gone > 0 then
      redis.call('HDEL', K.groupSlots, unpack(gone))
      unpin_if_empty(K.groupSlots)
    end
    unpin_if_empty(K.groupActive)
  end
  -- A group got its turn back, or consumers wait for a slot of globalConcurrency.
  if not concurrency_freed() and turned then
    wake()
    freed_woke = true
  end
end

-- What a message holds beside its body while it lives: its lease's token, the deliveries before
-- it, then what most topics never have, read with one EXISTS: priority, deferrals, retry due
-- time, progress, its key, its start-by deadline and its tags (`keep_tags`: a completed record
-- keeps them). `key`: nil leaves the key (keys_ended), 'drain' keeps it while a cancelled handler
-- may still run, 'left' drops only its entry (the caller updated the key).
local function lived_forget(ids, key, keep_tags)
  redis.call('HDEL', K.tokens, unpack(ids))
  redis.call('HDEL', K.attempts, unpack(ids))
  if redis.call('EXISTS', K.priority, K.deferrals, K.retryDue, K.progress, K.keyOf, K.deadlines, K.tags) > 0 then
    redis.call('HDEL', K.priority, unpack(ids))
    redis.call('HDEL', K.deferrals, unpack(ids))
    redis.call('HDEL', K.retryDue, unpack(ids))
    redis.call('HDEL', K.progress, unpack(ids))
    deadline_forget(ids)
    if not keep_tags then
      tags_forget(ids)
    end
    if key == nil then
      keys_ended(ids)
    elseif key == 'left' then
      redis.call('HDEL', K.keyOf, unpack(ids))
    end
  end
end

-- Dead letters and completed records deleted for good (purged, or beyond their bound): their
-- bodies, what a dead letter keeps for a requeue (reason, priority), their flow links and steps.
local function records_purged(ids)
  push_ids('HDEL', K.messages, ids)
  if redis.call('EXISTS', K.deadInfo, K.priority, K.attempts, K.progress) > 0 then
    push_ids('HDEL', K.deadInfo, ids)
    push_ids('HDEL', K.priority, ids)
    push_ids('HDEL', K.attempts, ids)
    push_ids('HDEL', K.progress, ids)
  end
  if redis.call('EXISTS', K.tags) == 1 then
    tags_forget(ids)
  end
  if flow_used() then
    flow_forget(ids)
  end
  steps_forget(ids)
end

-- The oldest of a bounded record set (dead, completed) beyond max_count, or older than max_age
-- ms, deleted for good: at most 100 per call, so one call stays short.
local function records_trim(key, now, max_count, max_age)
  local ids = oldest_beyond(key, now, max_count, max_age)
  if #ids > 0 then
    redis.call('ZREMRANGEBYRANK', key, 0, #ids - 1)
    records_purged(ids)
  end
end

-- Messages that ended well (acked, or completed with or without a record): their group slots
-- free, a flow's child hands its result (results[i], or '') to its parent, a parent's children
-- go; counted as acked.
local function ended_well(ids, results)
  leases_ended(ids)
  if flow_used() then
    local payloads = {}
    for i = 1, #ids do
      payloads[i] = results and results[i] or ''
    end
    flow_children_ended(ids, 'a', payloads)
    flow_forget(ids)
  end
  redis.call('HINCRBY', K.counters, 'acked', #ids)
end

-- Acked: nothing of the message stays. For the ids whose lease the caller checked; results as
-- for ended_well (complete.lua's, when it keeps no record).
local function messages_acked(ids, results)
  redis.call('ZREM', K.leased, unpack(ids))
  redis.call('HDEL', K.messages, unpack(ids))
  lived_forget(ids)
  steps_forget(ids)
  ended_well(ids, results)
end

-- Acks the id/token pairs of ARGV from index `first`: removes each message whose lease is
-- still the given one, with a few commands per batch, not per message. Returns one flag per
-- pair: 1 acked, 0 stale token, 2 already gone (no body, no lease: acked before, by this token
-- if its lease was still live, e.g. a resent call).
local function ack_leases(first)
  local held, results = held_leases(first)
  for i = first, #ARGV, 2 do
    local k = (i - first) / 2 + 1
    if results[k] == 0 and redis.call('HEXISTS', K.tokens, ARGV[i]) == 0 and redis.call('HEXISTS', K.messages, ARGV[i]) == 0 then
      results[k] = 2
      -- Maybe a superseded message's consumer, saying its handler returned.
      key_drained(ARGV[i])
    end
  end
  -- An ack by hand or along with a reserve carries no result (a consumer's goes through complete.lua).
  if #held > 0 then
    messages_acked(held)
  end
  return results
end

-- Completed with a record kept (its lease checked by the caller): its body becomes `record`,
-- listed in K.completed; its steps stay with it. The caller ends the batch with ended_well (a
-- message completed with no record kept goes as an acked one, messages_acked).
local function message_completed(id, record, now)
  redis.call('ZREM', K.leased, id)
  lived_forget({ id }, nil, true)
  redis.call('HSET', K.messages, id, record)
  redis.call('ZADD', K.completed, now, id)
end

-- Dead, with a reason (its lease, if any, already left K.leased): its body stays for inspection,
-- with its priority (a requeue restores it), steps and flow link; its deferrals start over. Its
-- info records the maxAttempts that applied to its deliveries (`m`; nil leaves it out), which its
-- body holds only when the message carried its own. The dead letters are bounded (records_trim).
local function message_dead(id, reason, message, attempt, max_attempts, now, max_count, max_age)
  redis.call('HDEL', K.tokens, id)
  redis.call('HDEL', K.attempts, id)
  redis.call('HDEL', K.deferrals, id)
  if redis.call('EXISTS', K.deadlines) == 1 then
    -- A dead letter keeps no deadline: a requeue means run it.
    deadline_forget({ id })
  end
  redis.call('ZADD', K.dead, now, id)
  redis.call('HSET', K.deadInfo, id, cjson.encode({ r = reason, e = message, a = attempt, m = max_attempts, t = now }))
  leases_ended({ id })
  keys_ended({ id })
  if flow_used() then
    flow_child_ended(id, 'f', cjson.encode({ r = reason, e = message }))
  end
  records_trim(K.dead, now, max_count, max_age)
end

-- Cancelled (cancel, or superseded by a keyed push) in `state`, after the caller took it out of
-- where it waited: nothing of it stays. A flow's child's cancel counts as its failure unless it
-- was dead already, with `reason` ('cancelled' when nil; 'expired' for a start-by deadline's
-- drop); a parent's children go. `key` as for lived_forget.
local function message_cancelled(id, state, key, reason)
  leases_ended({ id })
  if flow_used() then
    if state ~= 'dead' then
      flow_child_ended(id, 'f', cjson.encode({ r = reason or 'cancelled' }))
    end
    redis.call('ZREM', K.flowWaiting, id)
    flow_forget({ id })
  end
  redis.call('HDEL', K.messages, id)
  if state == 'dead' then
    redis.call('HDEL', K.deadInfo, id)
  end
  lived_forget({ id }, key)
  steps_forget({ id })
end
