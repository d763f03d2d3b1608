-- Fleet-wide limits (globalConcurrency, rateLimit, groupRateLimit) and the topic's hold
-- (rateLimited), after prelude.lua. Locals only. limits holds the limits (fields c, rm/rw, gm/gw,
-- gc; wt while groupWeights holds weights; qt while groupQuotas holds quotas: prelude-quotas.lua),
-- rateLog and rateLast the starts in each rate window (see rate_window), held the topic's hold
-- while `rateLimited` holds it.

-- The fleet-wide limits: a table of the numbers set (none on a plain topic).
local function topic_limits()
  local fields, limits = redis.call('HGETALL', K.limits), {}
  for i = 1, #fields, 2 do
    limits[fields[i]] = tonumber(fields[i + 1])
  end
  return limits
end

-- Whether a freed slot woke consumers (of this partition: the caller wakes a partitioned topic's home).
local freed_woke = false

-- A lease ended (its message is no longer counted by globalConcurrency): wakes the consumers
-- that found no slot (limits_room marked them waiting). True if it woke them.
local function concurrency_freed()
  if redis.call('HDEL', K.limits, 'waiting') == 1 then
    wake()
    freed_woke = true
    return true
  end
  return false
end

-- Rate limits hold in every interval: a field ('' is the topic, else a group) may start n more
-- at `now` iff at most max - n of its starts lie in (now - span, now], span >= perMs (rate_span).
-- Then no half-open interval [t, t + span) holds more than max: its last start saw all the
-- earlier ones in its window. rateLog (scores 0) keeps each field's starts of its last window as members
-- '<field>\0<start ms>\0<started before>\0<started after>' (numbers 15 digits but the last),
-- one member per reserve however many it started, in start order: the field's starts in its
-- window are the last member's total less the first's. rateLast (field -> ms of its last
-- start) lets reserve drop the members of fields that went quiet.

-- A rate window is perMs plus a dispatch allowance of ceil(perMs * 2 / 100) ms: a field may start
-- n more iff at most max - n of its starts lie in (now - span, now]. So a window's starts begin
-- perMs + allowance after the first of the window before: a handler may start up to the
-- allowance later than the reserve that started it (the reply's trip, a busy event loop) and the
-- handlers' own clocks still see at most max in any perMs. It costs 2 % of the rate.
local function rate_span(per_ms)
  return per_ms + math.ceil(per_ms * 2 / 100)
end

-- The fields' range bounds in rateLog ('[' first, '(' past the last).
local function rate_range(field)
  return '[' .. field .. '\0', '(' .. field .. '\1'
end

-- Drops `field`'s starts before (now - span, now]; returns how many are left and when the
-- first of them leaves the window (nil when none is left), then the last one's member. `log`:
-- another log of the same form (group quotas keep their own, prelude-quotas.lua), K.rateLog when nil.
local function rate_window(field, span, now, log)
  log = log or K.rateLog
  local from, to = rate_range(field)
  redis.call('ZREMRANGEBYLEX', log, from, '(' .. field .. '\0' .. string.format('%015d', now - span + 1))
  local first = redis.call('ZRANGE', log, from, to, 'BYLEX', 'LIMIT', 0, 1)[1]
  if not first then
    return 0, nil
  end
  local last = redis.call('ZRANGE', log, to, from, 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
  local start, before = string.match(first, '%z(%d+)%z(%d+)%z%d+$')
  return tonumber(string.match(last, '%z(%d+)$')) - tonumber(before), tonumber(start) + span, last
end

-- Records `n` starts of `field` at `now` (never before its last one: a server clock that steps
-- back keeps the order, and only holds starts longer). `keep_ms`: the longest window in use.
local function rate_record(field, now, n, keep_ms)
  local from, to = rate_range(field)
  local last = redis.call('ZRANGE', K.rateLog, to, from, 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
  local at, total = now, 0
  if last then
    local start, after = string.match(last, '%z(%d+)%z%d+%z(%d+)$')
    at, total = math.max(now, tonumber(start)), tonumber(after)
  end
  redis.call('ZADD', K.rateLog, 0, field .. string.format('\0%015d\0%015d\0%d', at, total, total + n))
  redis.call('ZADD', K.rateLast, at, field)
  -- Both go when every window ended: a topic whose limits went leaves nothing behind.
  redis.call('PEXPIRE', K.rateLog, keep_ms)
  redis.call('PEXPIRE', K.rateLast, keep_ms)
end

-- Fields whose last start is older than the longest window in use (at most `max_moves`) leave
-- rateLog: a group that went quiet keeps nothing. `log`, `last_key`: another log and its index
-- (K.rateLog and K.rateLast when nil).
local function rate_sweep(now, keep_ms, max_moves, log, last_key)
  log, last_key = log or K.rateLog, last_key or K.rateLast
  local fields = redis.call('ZRANGE', last_key, '-inf', now - keep_ms, 'BYSCORE', 'LIMIT', 0, max_moves)
  if #fields > 0 then
    redis.call('ZREMRANGEBYRANK', last_key, 0, #fields - 1)
    for _, field in ipairs(fields) do
      redis.call('ZREMRANGEBYLEX', log, rate_range(field))
    end
  end
end

-- The longest rate window of `limits` (ms): how long rateLog must keep a start.
local function rate_keep_ms(limits)
  return rate_span(math.max(limits.rw or 0, limits.gw or 0))
end

-- How many of `count` may start under the topic's hold and fleet-wide limits, and when the one
-- that stops them opens (math.huge: none does, or a concurrency limit, whose end an ack wakes).
local function limits_room(count, limits, now)
  local hold = redis.call('PTTL', K.held)
  if hold > 0 then
    return 0, now + hold
  end
  local room, opens = count, math.huge
  if limits.c then
    room = math.max(math.min(room, limits.c - lease_count()), 0)
    if room == 0 then
      redis.call('HSET', K.limits, 'waiting', 1)
    end
  end
  if limits.rm then
    local span = rate_span(limits.rw)
    local used, first_leaves = rate_window('', span, now)
    -- None in the window yet: what this call starts opens the next room, at now + span.
    if limits.rm - used < room then
      room, opens = math.max(limits.rm - used, 0), first_leaves or now + span
    end
  end
  return room, opens
end
