-- Priority levels, after prelude.lua. Locals only.
--
-- Level 0 is the plain ready LIST (K.ready); levels 1-9 each have a LIST of their own (K.ready1
-- .. K.ready9, the READY_LEVEL_KEYS of queue-keys.ts), and the readyLevels ZSET
-- (member = score = level) names the ones that hold ids, so a topic that never used
-- priorities reads one empty key. A message's level (1-9) is in the priority HASH.

-- The ready LIST of a level.
local function level_key(level)
  if level and level > 0 then
    return K['ready' .. level]
  end
  return K.ready
end

-- Makes ids ready at the head (LPUSH) or tail (RPUSH) of their level's LIST, in order within
-- a level; marks the levels above 0 in readyLevels. Returns true when it used one of them.
local function make_ready(command, ids)
  if #ids == 0 then
    return false
  end
  if redis.call('EXISTS', K.priority) == 0 then
    push_ids(command, K.ready, ids)
    return false
  end
  local leveled = false
  local groups = {}
  for i = 1, #ids, UNPACK_MAX do
    local levels = redis.call('HMGET', K.priority, unpack(ids, i, math.min(i + UNPACK_MAX - 1, #ids)))
    for k, level in ipairs(levels) do
      level = tonumber(level) or 0
      groups[level] = groups[level] or {}
      table.insert(groups[level], ids[i + k - 1])
    end
  end
  for level, group in pairs(groups) do
    push_ids(command, level_key(level), group)
    if level > 0 then
      redis.call('ZADD', K.readyLevels, level, level)
      leveled = true
    end
  end
  return leveled
end

-- The levels that hold ids in serving order (9 first), then '0'.
local function levels_in_order()
  local levels = redis.call('ZRANGE', K.readyLevels, 0, -1, 'REV')
  levels[#levels + 1] = '0'
  return levels
end

-- Takes up to `count` ids in serving order: the highest level first, FIFO within a level.
-- `used` is the caller's read of readyLevels (ascending; empty: only level 0 is used).
-- Returns false when none is ready (as LPOP does).
local function pop_ready(count, used)
  if #used == 0 then
    return redis.call('LPOP', K.ready, count)
  end
  local ids = {}
  for _, level in ipairs(levels_in_order()) do
    local key = level_key(tonumber(level))
    local taken = redis.call('LPOP', key, count - #ids) or {}
    for _, id in ipairs(taken) do
      ids[#ids + 1] = id
    end
    if level ~= '0' and redis.call('LLEN', key) == 0 then
      redis.call('ZREM', K.readyLevels, level)
    end
    if #ids == count then
      break
    end
  end
  return #ids > 0 and ids
end

-- Ready ids in serving order, from `offset`, at most `limit` (for listing).
local function ready_in_order(offset, limit)
  local ids = {}
  for _, level in ipairs(levels_in_order()) do
    local key = level_key(tonumber(level))
    local length = redis.call('LLEN', key)
    if offset >= length then
      offset = offset - length
    else
      for _, id in ipairs(redis.call('LRANGE', key, offset, offset + limit - #ids - 1)) do
        ids[#ids + 1] = id
      end
      offset = 0
      if #ids >= limit then
        break
      end
    end
  end
  return ids
end

-- Removes an id from whichever ready LIST holds it (its level's); 1 removed, 0 not ready.
local function remove_ready(id)
  local level = tonumber(redis.call('HGET', K.priority, id)) or 0
  local key = level_key(level)
  local removed = redis.call('LREM', key, 1, id)
  if level > 0 and redis.call('LLEN', key) == 0 then
    redis.call('ZREM', K.readyLevels, level)
  end
  return removed
end

-- Ready ids of every level, for stats and metrics.
local function ready_count()
  local total = redis.call('LLEN', K.ready)
  for _, level in ipairs(redis.call('ZRANGE', K.readyLevels, 0, -1)) do
    total = total + redis.call('LLEN', level_key(tonumber(level)))
  end
  return total
end
