-- Helpers for priority levels, shared by every operation script like prelude.lua (the
-- loader puts this text right after it). It defines locals only and touches no key by itself.
--
-- Priorities. Level 0 is the plain ready LIST; levels 1-9 each have a LIST of their own, passed
-- as nine consecutive KEYS from index `first` (ready1 .. ready9), and the readyLevels ZSET
-- (member = score = level) names the ones that hold ids, so a topic that never used
-- priorities reads one empty key. A message's level (1-9) is in the priority HASH.

-- The ready LIST of a level.
local function level_key(K_READY, first, level)
  if level and level > 0 then
    return KEYS[first + level - 1]
  end
  return K_READY
end

-- Makes ids ready at the head (LPUSH) or tail (RPUSH) of their level's LIST, in order within
-- a level; marks the levels above 0 in readyLevels. Returns true when it used one of them.
local function make_ready(command, K_READY, K_PRIORITY, K_LEVELS, first, ids)
  if #ids == 0 then
    return false
  end
  if redis.call('EXISTS', K_PRIORITY) == 0 then
    push_ids(command, K_READY, ids)
    return false
  end
  local leveled = false
  local groups = {}
  for i = 1, #ids, 1000 do
    local levels = redis.call('HMGET', K_PRIORITY, unpack(ids, i, math.min(i + 999, #ids)))
    for k, level in ipairs(levels) do
      level = tonumber(level) or 0
      groups[level] = groups[level] or {}
      table.insert(groups[level], ids[i + k - 1])
    end
  end
  for level, group in pairs(groups) do
    push_ids(command, level_key(K_READY, first, level), group)
    if level > 0 then
      redis.call('ZADD', K_LEVELS, level, level)
      leveled = true
    end
  end
  return leveled
end

-- The levels that hold ids in serving order (9 first), then '0'.
local function levels_in_order(K_LEVELS)
  local levels = redis.call('ZRANGE', K_LEVELS, 0, -1, 'REV')
  levels[#levels + 1] = '0'
  return levels
end

-- Takes up to `count` ids in serving order: the highest level first, FIFO within a level.
-- `used` is the caller's read of readyLevels (ascending; empty: only level 0 is used).
-- Returns false when none is ready (as LPOP does).
local function pop_ready(K_READY, K_LEVELS, first, count, used)
  if #used == 0 then
    return redis.call('LPOP', K_READY, count)
  end
  local ids = {}
  for _, level in ipairs(levels_in_order(K_LEVELS)) do
    local key = level_key(K_READY, first, tonumber(level))
    local taken = redis.call('LPOP', key, count - #ids) or {}
    for _, id in ipairs(taken) do
      ids[#ids + 1] = id
    end
    if level ~= '0' and redis.call('LLEN', key) == 0 then
      redis.call('ZREM', K_LEVELS, level)
    end
    if #ids == count then
      break
    end
  end
  return #ids > 0 and ids
end

-- Ready ids in serving order, from `offset`, at most `limit` (for listing).
local function ready_in_order(K_READY, K_LEVELS, first, offset, limit)
  local ids = {}
  for _, level in ipairs(levels_in_order(K_LEVELS)) do
    local key = level_key(K_READY, first, tonumber(level))
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
local function remove_ready(K_READY, K_PRIORITY, K_LEVELS, first, id)
  local level = tonumber(redis.call('HGET', K_PRIORITY, id)) or 0
  local key = level_key(K_READY, first, level)
  local removed = redis.call('LREM', key, 1, id)
  if level > 0 and redis.call('LLEN', key) == 0 then
    redis.call('ZREM', K_LEVELS, level)
  end
  return removed
end

-- Ready ids of every level, and grouped ones waiting in groupQueue (for stats and metrics).
local function ready_count(K_READY, K_LEVELS, first, K_GROUP_QUEUE)
  local total = redis.call('LLEN', K_READY) + redis.call('ZCARD', K_GROUP_QUEUE)
  for _, level in ipairs(redis.call('ZRANGE', K_LEVELS, 0, -1)) do
    total = total + redis.call('LLEN', level_key(K_READY, first, tonumber(level)))
  end
  return total
end

-- Due delayed messages (at most max_moves) join the tail of their level in due order; a grouped
-- one waiting for its first start joins its group instead (when `flow`). They are the lowest
-- scores, so removing them by rank costs O(log n) per message moved, never a scan. Returns
-- true when a level above 0 got one.
local function ready_due(K_READY, K_DELAYED, K_PRIORITY, K_LEVELS, first, now, max_moves, flow, capacity)
  local due = redis.call('ZRANGE', K_DELAYED, '-inf', now, 'BYSCORE', 'LIMIT', 0, max_moves)
  if #due == 0 then
    return false
  end
  redis.call('ZREMRANGEBYRANK', K_DELAYED, 0, #due - 1)
  if flow then
    due = enqueue_due_grouped(due, capacity)
  end
  return make_ready('RPUSH', K_READY, K_PRIORITY, K_LEVELS, first, due)
end

-- Expired leases (at most max_moves) go back to the head of their level; dropping the token
-- makes a late ack fail, and their attempt moves from the token to the attempts hash.
-- Returns true when a level above 0 got one.
local function ready_expired(K_READY, K_LEASED, K_ATTEMPTS, K_TOKENS, K_PRIORITY, K_LEVELS, first, now, max_moves)
  local expired = redis.call('ZRANGE', K_LEASED, '-inf', now, 'BYSCORE', 'LIMIT', 0, max_moves)
  if #expired == 0 then
    return false
  end
  local tokens = redis.call('HMGET', K_TOKENS, unpack(expired))
  local attempt_args = {}
  for i, id in ipairs(expired) do
    local attempt = token_attempt(tokens[i])
    if attempt then
      attempt_args[#attempt_args + 1] = id
      attempt_args[#attempt_args + 1] = attempt
    end
  end
  if #attempt_args > 0 then
    redis.call('HSET', K_ATTEMPTS, unpack(attempt_args))
  end
  push_ids('HDEL', K_TOKENS, expired)
  redis.call('ZREMRANGEBYRANK', K_LEASED, 0, #expired - 1)
  return make_ready('LPUSH', K_READY, K_PRIORITY, K_LEVELS, first, expired)
end

-- Whether plain (ungrouped) ids are ready; `used` as for pop_ready.
local function plain_left(K_READY, K_LEVELS, used)
  return redis.call('LLEN', K_READY) > 0 or (#used > 0 and redis.call('ZCARD', K_LEVELS) > 0)
end

-- Takes up to `room` ids to lease: grouped ones in their groups' turns (half the room while
-- plain ones are ready too, so neither kind starves) and plain ones in serving order. Returns
-- false when none is ready (as LPOP does).
local function take_ready(K_READY, K_LEVELS, first, room, used, flow, limits, now)
  local ids = {}
  if flow then
    ids = start_grouped(plain_left(K_READY, K_LEVELS, used) and math.ceil(room / 2) or room, limits, now)
  end
  for _, id in ipairs(#ids < room and pop_ready(K_READY, K_LEVELS, first, room - #ids, used) or {}) do
    ids[#ids + 1] = id
  end
  if flow and #ids < room then
    for _, id in ipairs(start_grouped(room - #ids, limits, now)) do
      ids[#ids + 1] = id
    end
  end
  return #ids > 0 and ids
end

-- When something becomes ready without a push: the first due time or lease deadline, the end of a
-- group's hold (with `flow`), or `opens` (a limit's end) while work waits for it; math.huge if none.
local function next_due_at(K_READY, K_DELAYED, K_LEASED, K_LEVELS, used, flow, opens)
  local next_delayed = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')[2]
  local next_lease = redis.call('ZRANGE', K_LEASED, 0, 0, 'WITHSCORES')[2]
  local at = math.min(tonumber(next_delayed) or math.huge, tonumber(next_lease) or math.huge)
  if flow then
    at = math.min(at, tonumber(redis.call('ZRANGE', K_GROUP_HELD, 0, 0, 'WITHSCORES')[2]) or math.huge)
    if opens < at and (plain_left(K_READY, K_LEVELS, used) or redis.call('ZCARD', K_GROUP_TURNS) > 0) then
      at = opens
    end
  end
  return at
end
