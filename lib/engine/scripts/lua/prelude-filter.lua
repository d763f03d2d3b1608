-- Filters: the messages of one state that match a MessageFilter (list, count, bulk's selection),
-- after prelude.lua and prelude-levels.lua. Locals only.
--
-- filter_walk(f, start, budget) -> matched ids, next start, sort keys
--   f       { state = 'ready' | 'delayed' | 'leased' | 'dead' | 'completed' | 'waiting-children',
--             tag = string or nil, from = ms or nil, to = ms or nil (inclusive, on push time),
--             error = string or nil (a plain substring of a dead letter's last error text; no
--             message of another state matches it), keys = true to have ready rows' sort keys
--             without a tag (their push time: it reads their bodies) }
--   start   entries of the walked sequence examined by earlier calls (0 at first; then the next
--           start the last call returned)
--   budget  most entries of the sequence this call examines (>= 1), matched or not
-- Returns the ids that match, in walk order (an array, maybe empty); the next start, nil when the
--   sequence is exhausted; and each match's sort key (an array beside the ids).
-- The sequence: with a tag, its index `<K.tagIndex><tag>` by push time (oldest first), only from..to
--   (sort key: push time); without a tag, the state's own structure in list order: ready head first
--   by level (sort key: push time with f.keys or from/to, else 0), delayed by due time (flow nodes held
--   at FLOW_HELD left out), leased by deadline, dead oldest first, completed newest first,
--   waiting-children by when it began to wait (sort key: that score). A start is an offset in that
--   sequence: exact within one script call; over several calls, entries that moved shift it.
-- With a tag, ready is what get calls ready: a live message in none of the other structures (a
-- grouped message waiting for its turn included); without one, the ready lists, as list shows them.

-- The ZSET of each state but ready.
local FILTER_STATE_ZSETS = {
  delayed = K.delayed,
  leased = K.leased,
  dead = K.dead,
  completed = K.completed,
  ['waiting-children'] = K.flowWaiting,
}

-- One command over many ids (HMGET, ZMSCORE), UNPACK_MAX at a time: the answers in the ids' order.
local function over_ids(command, key, ids)
  local out = {}
  for i = 1, #ids, UNPACK_MAX do
    local part = redis.call(command, key, unpack(ids, i, math.min(i + UNPACK_MAX - 1, #ids)))
    for k = 1, #part do
      out[i + k - 1] = part[k]
    end
  end
  return out
end

-- When a stored body or completed record was pushed (ms); nil when unreadable.
local function body_pushed_at(body)
  if not body then
    return nil
  end
  return enqueued_at(body) or tonumber(string.match(body, '^{"c":%d+,"t":(%d+)'))
end

-- Whether a dead letter's info record (JSON, its error text in "e") contains `needle`, as given.
local function error_contains(info, needle)
  if not info then
    return false
  end
  local ok, record = pcall(cjson.decode, info)
  return ok and type(record) == 'table' and type(record.e) == 'string' and string.find(record.e, needle, 1, true) ~= nil
end

-- Keeps the ids (and their keys) whose flag is true.
local function only_flagged(ids, keys, flags)
  local out_ids, out_keys = {}, {}
  for i, id in ipairs(ids) do
    if flags[i] then
      out_ids[#out_ids + 1] = id
      out_keys[#out_ids] = keys[i]
    end
  end
  return out_ids, out_keys
end

-- Which of a tag's ids are in the state: one ZMSCORE per structure, no call per id.
local function tagged_in_state(state, ids)
  local flags = {}
  if state == 'ready' then
    local live = over_ids('HMGET', K.tags, ids)
    local others = {}
    for _, key in ipairs({ K.completed, K.dead, K.leased, K.delayed }) do
      others[#others + 1] = over_ids('ZMSCORE', key, ids)
    end
    for i = 1, #ids do
      flags[i] = live[i] and true or false
      for _, scores in ipairs(others) do
        if scores[i] then
          flags[i] = false
        end
      end
    end
    return flags
  end
  local scores = over_ids('ZMSCORE', FILTER_STATE_ZSETS[state], ids)
  local held = tonumber(FLOW_HELD)
  for i = 1, #ids do
    flags[i] = scores[i] and not (state == 'delayed' and tonumber(scores[i]) == held) or false
  end
  return flags
end

-- A batch of the walk's sequence, from `start`: its ids, their sort keys, and the next start.
local function walk_batch(f, start, budget)
  local ids, keys, entries = {}, {}, nil
  if f.tag then
    local key = K.tagIndex .. f.tag
    check_types(key, 'zset')
    entries = redis.call('ZRANGE', key, f.from or '-inf', f.to or '+inf', 'BYSCORE', 'LIMIT', start, budget,
      'WITHSCORES')
  elseif f.state == 'ready' then
    ids = ready_in_order(start, budget)
    for i = 1, #ids do
      keys[i] = 0
    end
    return ids, keys, #ids == budget and start + budget or nil
  elseif f.state == 'completed' then
    entries = redis.call('ZRANGE', K.completed, start, start + budget - 1, 'REV', 'WITHSCORES')
  else
    entries = redis.call('ZRANGE', FILTER_STATE_ZSETS[f.state], start, start + budget - 1, 'WITHSCORES')
  end
  local held = tonumber(FLOW_HELD)
  for i = 1, #entries, 2 do
    local plain = f.tag or not (entries[i] == ENCODING_ANCHOR or (f.state == 'delayed' and tonumber(entries[i + 1]) == held))
    if plain then
      ids[#ids + 1] = entries[i]
      keys[#ids] = tonumber(entries[i + 1])
    end
  end
  return ids, keys, #entries == 2 * budget and start + budget or nil
end

local function filter_walk(f, start, budget)
  if f.error and f.state ~= 'dead' then
    return {}, nil, {}
  end
  local ids, keys, next_start = walk_batch(f, start, budget)
  if #ids == 0 then
    return ids, next_start, keys
  end
  if f.tag then
    ids, keys = only_flagged(ids, keys, tagged_in_state(f.state, ids))
  elseif f.from or f.to or (f.keys and f.state == 'ready') then
    -- Push time is in the body: read only when a range or ready's sort key asks for it.
    local bodies, flags = over_ids('HMGET', K.messages, ids), {}
    for i = 1, #ids do
      local at = body_pushed_at(bodies[i])
      if f.state == 'ready' then
        keys[i] = at or 0
      end
      flags[i] = not (f.from or f.to) or (at ~= nil and at >= (f.from or at) and at <= (f.to or at))
    end
    ids, keys = only_flagged(ids, keys, flags)
  end
  if f.error and #ids > 0 then
    local infos, flags = over_ids('HMGET', K.deadInfo, ids), {}
    for i = 1, #ids do
      flags[i] = error_contains(infos[i], f.error)
    end
    ids, keys = only_flagged(ids, keys, flags)
  end
  return ids, next_start, keys
end
