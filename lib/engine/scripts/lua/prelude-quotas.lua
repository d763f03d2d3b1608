-- Group quotas (setGroupQuotas), after prelude-limits.lua. Locals only. groupQuotas holds each
-- quota as '<max> <perMs> <scaleByWeight: 1 true> <handlerMs, 0: none>', under '' (the default; a group
-- name is never empty) or a group; the field qt of limits (the longest window in use, ms) marks a
-- topic that has quotas, read with the limits, so a topic without them pays nothing. quotaLog is a
-- rate log (prelude-limits.lua) of two fields per group: 's<group>' its starts, 'h<group>' the
-- handler time (ms) of its ended deliveries, recorded at their ends; quotaLast is its sweep index.
-- quotaRuns holds the running deliveries of groups with a handler budget: 'i<id>' ->
-- '<start ms>\0<group>', and 'g<group>' -> '<running> <sum of their starts>', so a group's time
-- running so far is one read. quotaHeld: group -> the end of the hold its quota gave it.

-- Group -> its quota as this call read it ({ max, per, handler }, scaled by its weight; `last`: its
-- starts' last member in quotaLog, once quota_hold read it), or false.
local quota_cache = {}

-- The quota of `group`: its own, else the default, else none (false).
local function group_quota(group)
  local quota = quota_cache[group]
  if quota == nil then
    local texts = redis.call('HMGET', K.groupQuotas, group, '')
    local text = texts[1] or texts[2]
    quota = false
    if text then
      local max, per, scale, handler = string.match(text, '^(%d+) (%d+) (%d) (%d+)$')
      local weight = scale == '1' and tonumber(redis.call('HGET', K.groupWeights, group)) or 1
      handler = tonumber(handler) * weight
      quota = { max = tonumber(max) * weight, per = tonumber(per), handler = handler > 0 and handler or nil }
    end
    quota_cache[group] = quota
  end
  return quota
end

-- Whether this call set quotaLog's expiry yet: once a call is enough (a script's time stands still).
local quota_log_kept = false

-- Records `n` (starts, or ms of handler time) for `field` of quotaLog at `now`, as rate_record
-- does for rateLog. `last`: the field's last member as rate_window just read it (false: none; nil:
-- read it). Returns the member written.
local function quota_record(field, now, n, keep_ms, last)
  if last == nil then
    local from, to = rate_range(field)
    last = redis.call('ZRANGE', K.quotaLog, to, from, 'BYLEX', 'REV', 'LIMIT', 0, 1)[1] or false
  end
  local at, total = now, 0
  if last then
    local start, after = string.match(last, '%z(%d+)%z%d+%z(%d+)$')
    at, total = math.max(now, tonumber(start)), tonumber(after)
  end
  local member = field .. string.format('\0%015d\0%015d\0%d', at, total, total + n)
  redis.call('ZADD', K.quotaLog, 0, member)
  redis.call('ZADD', K.quotaLast, at, field)
  if not quota_log_kept then
    quota_log_kept = true
    -- Both go when every window ended: quotas that went (or groups that went quiet) leave nothing.
    redis.call('PEXPIRE', K.quotaLog, keep_ms)
    redis.call('PEXPIRE', K.quotaLast, keep_ms)
  end
  return member
end

-- When a group over its quota may start again (nil: it may start now). Its starts: the rule of
-- groupRateLimit (rate_window). Its handler time: what its deliveries that ended in the last perMs
-- ran, plus what those running have run so far, must be below the budget; the hold lasts until the
-- first ended one leaves the window (a perMs from now when none did: the running ones are
-- recorded when they end), and is looked at again then.
local function quota_hold(group, now)
  local quota = group_quota(group)
  if not quota then
    return nil
  end
  local until_ms
  local used, opens, last = rate_window('s' .. group, rate_span(quota.per), now, K.quotaLog)
  -- quota_started writes after it without reading it again.
  quota.last = last or false
  if used >= quota.max then
    until_ms = opens
  end
  if quota.handler then
    local spent, leaves = rate_window('h' .. group, quota.per, now, K.quotaLog)
    local running, starts = string.match(redis.call('HGET', K.quotaRuns, 'g' .. group) or '', '^(%d+) (%d+)$')
    if running then
      spent = spent + tonumber(running) * now - tonumber(starts)
    end
    if spent >= quota.handler then
      until_ms = math.max(until_ms or 0, leaves or now + quota.per)
    end
  end
  return until_ms
end

-- A group's quota holds it in groupHeld until `until_ms`: noted in quotaHeld too, so that
-- setGroupQuotas can end the holds its quotas made (and only those).
local function quota_held(group, until_ms, keep_ms)
  redis.call('ZADD', K.quotaHeld, until_ms, group)
  redis.call('PEXPIRE', K.quotaHeld, keep_ms)
end

-- A group started a message at `now` (in its turn): counted in its window if it has a quota.
-- `keep_ms`: the longest window in use (limits' qt).
local function quota_started(group, now, keep_ms)
  local quota = group_quota(group)
  if quota then
    quota.last = quota_record('s' .. group, now, 1, keep_ms, quota.last)
  end
end

-- Deliveries leased at `now` (any attempt): those of a group with a handler budget are running.
local function runs_started(ids, now)
  local groups = redis.call('HMGET', K.groupActive, unpack(ids))
  local args, added, order = {}, {}, {}
  local at = string.format('%d', now)
  for i, group in ipairs(groups) do
    local quota = group and group_quota(group)
    if quota and quota.handler then
      args[#args + 1] = 'i' .. ids[i]
      args[#args + 1] = at .. '\0' .. group
      if not added[group] then
        added[group] = 0
        order[#order + 1] = 'g' .. group
      end
      added[group] = added[group] + 1
    end
  end
  if #order == 0 then
    return
  end
  local totals = redis.call('HMGET', K.quotaRuns, unpack(order))
  for i, field in ipairs(order) do
    local n = added[string.sub(field, 2)]
    local running, starts = string.match(totals[i] or '0 0', '^(%d+) (%d+)$')
    args[#args + 1] = field
    args[#args + 1] = string.format('%d %d', tonumber(running) + n, tonumber(starts) + n * now)
  end
  redis.call('HSET', K.quotaRuns, unpack(args))
end

-- Deliveries that ended at `now` (acked, failed, dead, released, deferred, cancelled, lease
-- lost): each running one's handler time (now less its start) is recorded for its group.
local function runs_ended(ids, now)
  local fields = {}
  for i, id in ipairs(ids) do
    fields[i] = 'i' .. id
  end
  local runs = redis.call('HMGET', K.quotaRuns, unpack(fields))
  local ended, by_group, order = {}, {}, {}
  for i, run in ipairs(runs) do
    if run then
      local start, group = string.match(run, '^(%d+)%z(.*)$')
      start = tonumber(start)
      ended[#ended + 1] = fields[i]
      local sum = by_group[group]
      if not sum then
        sum = { n = 0, starts = 0, spent = 0 }
        by_group[group] = sum
        order[#order + 1] = group
      end
      sum.n, sum.starts, sum.spent = sum.n + 1, sum.starts + start, sum.spent + math.max(now - start, 0)
    end
  end
  if #ended == 0 then
    return
  end
  redis.call('HDEL', K.quotaRuns, unpack(ended))
  local keys = {}
  for i, group in ipairs(order) do
    keys[i] = 'g' .. group
  end
  local totals = redis.call('HMGET', K.quotaRuns, unpack(keys))
  local keep_ms = tonumber(redis.call('HGET', K.limits, 'qt'))
  local kept, gone = {}, {}
  for i, group in ipairs(order) do
    local sum = by_group[group]
    local running, starts = string.match(totals[i] or '0 0', '^(%d+) (%d+)$')
    running, starts = tonumber(running) - sum.n, tonumber(starts) - sum.starts
    if running > 0 then
      kept[#kept + 1] = keys[i]
      kept[#kept + 1] = string.format('%d %d', running, starts)
    else
      gone[#gone + 1] = keys[i]
    end
    if keep_ms and sum.spent > 0 then
      quota_record('h' .. group, now, sum.spent, keep_ms)
    end
  end
  if #kept > 0 then
    redis.call('HSET', K.quotaRuns, unpack(kept))
  end
  if #gone > 0 then
    redis.call('HDEL', K.quotaRuns, unpack(gone))
  end
end

-- runs_ended for a script that has not read the limits: one EXISTS when no delivery is running
-- under a handler budget.
local function runs_ended_if_any(ids, now)
  if #ids > 0 and redis.call('EXISTS', K.quotaRuns) == 1 then
    runs_ended(ids, now or now_ms())
  end
end
