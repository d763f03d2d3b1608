-- Helpers shared by every operation script. The loader puts this text after the
-- script's shebang line and before its body, so each script stays one atomic call.
-- It defines locals only and touches no key by itself.

-- Keys of ordered groups and fleet-wide limits (prelude-flow.lua): nil unless the script takes
-- FLOW_CONTROL_KEYS and calls use_flow_keys with the index of the first.
local K_GROUP_QUEUE, K_GROUP_WAITING, K_GROUP_ACTIVE, K_GROUP_SLOTS, K_GROUP_TURNS
local K_GROUP_HELD, K_GROUP_SEQUENCE, K_LIMITS, K_RATE, K_HELD, K_FLOW_WAKE
local function use_flow_keys(first)
  K_GROUP_QUEUE, K_GROUP_WAITING, K_GROUP_ACTIVE = KEYS[first], KEYS[first + 1], KEYS[first + 2]
  K_GROUP_SLOTS, K_GROUP_TURNS, K_GROUP_HELD = KEYS[first + 3], KEYS[first + 4], KEYS[first + 5]
  K_GROUP_SEQUENCE, K_LIMITS, K_RATE = KEYS[first + 6], KEYS[first + 7], KEYS[first + 8]
  K_HELD, K_FLOW_WAKE = KEYS[first + 9], KEYS[first + 10]
end
-- Called (by bury and ack_leases) with the ids whose lease or life ended, when the script took FLOW_CONTROL_KEYS:
-- frees their group slots and wakes consumers held by a concurrency limit. Set by prelude-flow.lua.
local leases_ended
-- Whether leases_ended woke consumers (of this partition: the caller wakes a partitioned topic's home).
local flow_woke = false

-- The Redis server's clock in whole milliseconds: the one clock every consumer shares.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Fails the call before any write when a queue key holds another type, so a foreign
-- key makes the operation fail without changing anything. Arguments: key, type, ...
local function check_types(...)
  local spec = { ... }
  for i = 1, #spec, 2 do
    local actual = redis.call('TYPE', spec[i])['ok']
    if actual ~= 'none' and actual ~= spec[i + 1] then
      error({ err = 'ACKQ_WRONGTYPE ' .. spec[i] .. ' ' .. actual .. ' ' .. spec[i + 1] })
    end
  end
end

-- The delivery number a lease token carries (tokens are <sequence>.<attempt>); nil for
-- none or a token of another form (a lease made before tokens carried it).
local function token_attempt(token)
  return token and tonumber(string.match(token, '%.(%d+)$')) or nil
end

-- Leaves one wake-up token for a blocked consumer; never more than one.
local function wake(wake_key)
  if redis.call('LLEN', wake_key) == 0 then
    redis.call('RPUSH', wake_key, '1')
  end
end

-- Pushes many ids with one command per 1000 (unpack has a stack limit).
local function push_ids(command, key, ids)
  for i = 1, #ids, 1000 do
    redis.call(command, key, unpack(ids, i, math.min(i + 999, #ids)))
  end
end

-- Moves a message to the dead letters with a reason; its body stays for inspection.
-- The dead letters are bounded: the oldest beyond max_count, or older than max_age ms,
-- are deleted for good (at most 100 per call, so one call stays short).
-- A dead letter keeps its priority (a requeue restores it); its deferrals start over.
-- The oldest members of a ZSET scored by time that are beyond max_count or older than max_age,
-- at most 100 (so one call stays short): what a bounded record set drops next.
local function oldest_beyond(key, now, max_count, max_age)
  local aged = #redis.call('ZRANGE', key, '-inf', now - max_age, 'BYSCORE', 'LIMIT', 0, 100)
  local excess = math.min(math.max(redis.call('ZCARD', key) - max_count, 0), 100)
  local drop = math.max(aged, excess)
  return drop > 0 and redis.call('ZRANGE', key, 0, drop - 1) or {}
end

local function bury(dead_key, info_key, messages_key, id, reason, message, attempt, now, max_count, max_age,
                    priority_key, deferrals_key)
  redis.call('HDEL', deferrals_key, id)
  redis.call('ZADD', dead_key, now, id)
  redis.call('HSET', info_key, id, cjson.encode({ r = reason, e = message, a = attempt, t = now }))
  if K_GROUP_ACTIVE then
    leases_ended({ id })
  end
  local ids = oldest_beyond(dead_key, now, max_count, max_age)
  if #ids > 0 then
    redis.call('HDEL', messages_key, unpack(ids))
    redis.call('HDEL', info_key, unpack(ids))
    redis.call('HDEL', priority_key, unpack(ids))
    redis.call('ZREMRANGEBYRANK', dead_key, 0, #ids - 1)
  end
end

-- Splits the id/token pairs of ARGV (from index `first`) and checks every token with one
-- HMGET. Returns the ids whose lease is still the given one, and one flag per pair
-- (1 held, 0 stale).
local function held_leases(tokens_key, first)
  local ids, given, held, flags = {}, {}, {}, {}
  for i = first, #ARGV, 2 do
    ids[#ids + 1] = ARGV[i]
    given[#given + 1] = ARGV[i + 1]
  end
  if #ids == 0 then
    return held, flags
  end
  local current = redis.call('HMGET', tokens_key, unpack(ids))
  for i, id in ipairs(ids) do
    if current[i] == given[i] then
      held[#held + 1] = id
      flags[i] = 1
    else
      flags[i] = 0
    end
  end
  return held, flags
end

-- Acks the id/token pairs of ARGV from index `first`: removes each message whose lease is
-- still the given one, with a few commands per batch, not per message, and counts them in
-- K_COUNTERS. Returns one flag per pair: 1 acked, 0 stale token, 2 already gone (no body, no
-- lease: acked before, by this token if its lease was still live, e.g. a resent call).
local function ack_leases(K_LEASED, K_MESSAGES, K_ATTEMPTS, K_TOKENS, K_PRIORITY, K_DEFERRALS, K_COUNTERS, first)
  local held, results = held_leases(K_TOKENS, first)
  for i = first, #ARGV, 2 do
    local k = (i - first) / 2 + 1
    if results[k] == 0 and redis.call('HEXISTS', K_TOKENS, ARGV[i]) == 0 and redis.call('HEXISTS', K_MESSAGES, ARGV[i]) == 0 then
      results[k] = 2
    end
  end
  if #held > 0 then
    redis.call('ZREM', K_LEASED, unpack(held))
    redis.call('HDEL', K_MESSAGES, unpack(held))
    redis.call('HDEL', K_ATTEMPTS, unpack(held))
    redis.call('HDEL', K_TOKENS, unpack(held))
    -- One read for both: a plain topic has neither.
    if redis.call('EXISTS', K_PRIORITY, K_DEFERRALS) > 0 then
      redis.call('HDEL', K_PRIORITY, unpack(held))
      redis.call('HDEL', K_DEFERRALS, unpack(held))
    end
    if K_GROUP_ACTIVE then
      leases_ended(held)
    end
    redis.call('HINCRBY', K_COUNTERS, 'acked', #held)
  end
  return results
end
