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
--   replay (dead, completed), in two calls: 'peek' reads the next ids with what a copy needs
--     (nothing leaves the snapshot); 'replay' is given each one's copy, made by the caller (a new
--     id routed to this partition, its body as push takes it), and stores it as push would, ready
--     now, while the original is still in the snapshot and the state: the copy is made once
--   reencrypt (any), in two calls: 'peek', then 'reencrypt' with each value the caller sealed
--     again from what the peek read: written only while the stored value is still the one read
--     (compare and set, by its SHA1); one gone since is passed over, one changed since (a
--     message completed meanwhile) stays in the snapshot for the next peek
--
-- K.bulk K.bulkIds K.dead K.completed K.flowOpen K.flowWaiting K.wake K.counters K.groupCount
-- ARGV[1]  bulk id
-- ARGV[2]  action: 'requeue', 'purge', 'cancel', 'peek', 'replay' or 'reencrypt'
-- ARGV[3]  the state it selected
-- ARGV[4]  how many ids to take (1-1000)
-- ARGV[5]  ttl (ms) of the snapshot and progress, renewed here
-- ARGV[6..] replay only: '1' when grouped messages wait in their groups' ZSETs (push.lua's
--          ARGV[1]), then per original: its id, its copy's id, the copy's body as push takes it
--          ('' when it has none to copy: passed over), priority (0-9), group ('' for none),
--          tags (joined by NUL, '' for none)
--          reencrypt only: per id, its id, the SHA1 (hex) of the value the peek read, what to do
--          ('w' write the new value, 'c' leave it: current already, 'u' leave it: undecodable,
--          counted in the progress's `u`), the new value ('' unless 'w')
-- Returns  peek: per id in snapshot order, still in the state: { id, stored body or record,
--          priority or false, tags or false }, flat; an id no longer in the state: { id, false,
--          false, false }
--          reencrypt: as the others, acted being the values written
--          else { acted, skipped, ids left in the snapshot, outbox entries written (child id,
--          entry: a cancelled flow child's, for the caller to pass on), flow parents left dead
--          for the caller to requeue, children of cancelled parents to cancel in turn (their
--          fields) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
cancel_check_types()
check_types(K.flowOpen, 'set', K.flowWaiting, 'zset', K.wake, 'list')
local bulk_id, action, state = ARGV[1], ARGV[2], ARGV[3]
local snapshot = K.bulkIds .. bulk_id
local key = snapshot
-- Whether `id` is (still) in `state`: where it waits now ('any': it has a body or record). A
-- flow's parent waiting for its children sits in K.delayed too, at a score no due time reaches.
local function in_state(id)
  if state == 'any' then
    return redis.call('HEXISTS', K.messages, id) == 1
  elseif state == 'dead' then
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

-- The next ids and what a copy of each needs, or false where it left the state.
local function peek()
  local ids = redis.call('ZRANGE', key, 0, tonumber(ARGV[4]) - 1)
  local out = {}
  for _, id in ipairs(ids) do
    local live = in_state(id)
    out[#out + 1] = id
    out[#out + 1] = live and redis.call('HGET', K.messages, id) or false
    out[#out + 1] = live and redis.call('HGET', K.priority, id) or false
    out[#out + 1] = live and redis.call('HGET', K.tags, id) or false
  end
  return out
end

-- Stores the copies of the originals still in the snapshot and the state; returns how many
-- originals left the snapshot here, and of them how many were copied.
local function replay()
  local now = now_ms()
  local stamp, compact_stamp = body_stamps(now)
  legacy_groups = ARGV[6] ~= '1'
  local taken, copied, stored, grouped = 0, 0, 0, 0
  local ready, capacity = {}, nil
  for i = 7, #ARGV, 6 do
    local original, copy, body, level, group, tags = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3]), ARGV[i + 4], ARGV[i + 5]
    if redis.call('ZREM', key, original) == 1 then
      taken = taken + 1
      if body ~= '' and in_state(original) then
        copied = copied + 1
        if redis.call('HSETNX', K.messages, copy, (string.byte(body) == 124 and compact_stamp or stamp) .. body) == 1 then
          stored = stored + 1
          if group ~= '' then
            capacity = capacity or group_capacity()
            grouped = grouped + group_enqueue(group, copy, string.format('%d', group_sequence()), capacity)
          elseif level > 0 then
            redis.call('HSET', K.priority, copy, level)
            make_ready('RPUSH', { copy })
          else
            ready[#ready + 1] = copy
          end
          if tags ~= '' then
            extras_stored(copy, { tags = tags }, nil, now)
          end
        end
      end
    end
  end
  if stored > 0 then
    extras_flush()
    redis.call('HINCRBY', K.counters, 'pushed', stored)
    if grouped > 0 then
      redis.call('INCRBY', K.groupCount, grouped)
    end
    push_ids('RPUSH', K.ready, ready)
    wake()
  end
  return taken, copied
end

-- Writes the values sealed again whose stored value is still the one read; returns how many
-- ids left the snapshot, how many were written, and how many could not be opened.
local function reencrypt()
  local taken, written, undecodable = 0, 0, 0
  for i = 6, #ARGV, 4 do
    local id, digest, what = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    local stored = redis.call('HGET', K.messages, id)
    if not stored or redis.sha1hex(stored) == digest then
      taken = taken + redis.call('ZREM', key, id)
      if stored and what == 'w' then
        redis.call('HSET', K.messages, id, ARGV[i + 3])
        written = written + 1
      elseif stored and what == 'u' then
        undecodable = undecodable + 1
      end
    end
  end
  return taken, written, undecodable
end

if action == 'peek' then
  return peek()
end

local ids, acted, skipped, undecodable = {}, 0, 0, 0
if action == 'replay' or action == 'reencrypt' then
  local taken
  if action == 'replay' then
    taken, acted = replay()
  else
    taken, acted, undecodable = reencrypt()
  end
  skipped = taken - acted
  ids = { taken }
else
  ids = redis.call('ZRANGE', key, 0, tonumber(ARGV[4]) - 1)
  if #ids == 0 then
    return { 0, 0, 0, {}, {}, {} }
  end
  redis.call('ZREM', key, unpack(ids))
end
local requeued, purged, parents, children = {}, {}, {}, {}
for _, id in ipairs((action == 'replay' or action == 'reencrypt') and {} or ids) do
  if not in_state(id) then
    skipped = skipped + 1
  elseif action == 'requeue' then
    acted = acted + 1
    if child_failed_parent(id) then
      parents[#parents + 1] = id
    elseif dead_letter_back(id) then
      requeued[#requeued + 1] = id
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
redis.call('HINCRBY', key, 'p', (action == 'replay' or action == 'reencrypt') and ids[1] or #ids)
if skipped > 0 then
  redis.call('HINCRBY', key, 's', skipped)
end
if undecodable > 0 then
  redis.call('HINCRBY', key, 'u', undecodable)
end
redis.call('PEXPIRE', key, ARGV[5])
key = snapshot
local left = redis.call('ZCARD', key)
if left > 0 then
  redis.call('PEXPIRE', key, ARGV[5])
end
return { acted, skipped, left, flow_ended, parents, children }
