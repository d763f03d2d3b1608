-- Group quotas (setGroupQuotas), after prelude-limits.lua. Locals only. groupQuotas holds each
-- quota as '<max> <perMs> <scaleByWeight: 1 true> <handlerMs, 0: none>', under 'q' (the default; a
-- group name is never empty) or 'q<group>'; the field qt of limits (the longest window in use, ms)
-- marks a topic that has quotas, read with the limits, so a topic without them pays nothing. Beside
-- the quotas, so that a start reads its group's quota and state in one command, groupQuotas holds
-- all the group's quota needs in one field, written once a call: 'g<group>' -> '<running> <sum of
-- their starts>|<starts>|<handler time>', its deliveries running under a handler budget, then two
-- windows: its starts, and the handler time (ms) of its ended deliveries, recorded at their ends.
-- A window is '<before> <last t> <last total> <entries>;t:total,...' (window_parse: ms and running
-- totals, oldest first, only its current window's) while it has at most WINDOW_MAX entries, else
-- 'L<last ms>': its entries moved to quotaLog, a rate log (prelude-limits.lua) with fields
-- 's<group>' and 'h<group>'. And 'i<id>' -> '<start ms>\0<group>' for each delivery running under
-- a budget. quotaHeld: group -> the end of the hold its quota gave it.

-- Entries a window keeps in its field before it moves to quotaLog.
local WINDOW_MAX = 64

-- A window in its field: '<before> <last t> <last total> <entries>;t:total,t:total...' (totals
-- running, as in a rate log: what it holds is the last total less `before`, the total before its
-- first entry), so reading, trimming and adding touch its ends only, never each entry.
local function window_parse(text)
  local last = string.match(text, '^L(%d+)$')
  if last then
    return { log = tonumber(last) }
  end
  local before, last_t, total, n, body = string.match(text, '^(%d+) (%d+) (%d+) (%d+);(.*)$')
  if not before then
    return { before = 0, last_t = 0, total = 0, n = 0, body = '' }
  end
  return { before = tonumber(before), last_t = tonumber(last_t), total = tonumber(total), n = tonumber(n), body = body }
end

local function window_text(win)
  if win.log then
    return string.format('L%d', win.log)
  end
  if win.n == 0 then
    return ''
  end
  return string.format('%d %d %d %d;', win.before, win.last_t, win.total, win.n) .. win.body
end

-- Drops the entries at or before `from` (they are in time order).
local function window_trim(win, from)
  while win.n > 0 do
    local t, total, rest = string.match(win.body, '^(%d+):(%d+),?(.*)$')
    if tonumber(t) > from then
      return
    end
    win.before, win.body, win.n = tonumber(total), rest, win.n - 1
  end
end

-- The sum of what `win` holds in (now - span, now], and when its first entry leaves it (nil: none),
-- exactly as rate_window counts a rate log (which a moved window uses).
local function window_sum(win, field, span, now)
  if win.log then
    local used, opens, last = rate_window(field, span, now, K.quotaLog)
    if used == 0 then
      -- Nothing left in the log: the window is back in its field.
      win.log, win.member = nil, nil
      win.before, win.last_t, win.total, win.n, win.body = 0, 0, 0, 0, ''
      return 0, nil
    end
    win.member = last
    return used, opens
  end
  window_trim(win, now - span)
  if win.n == 0 then
    return 0, nil
  end
  return win.total - win.before, tonumber(string.match(win.body, '^(%d+):')) + span
end

-- Whether this call set quotaLog's expiry yet: once a call is enough (a script's time stands still).
local quota_log_kept = false

local function quota_log_keep(keep_ms)
  if not quota_log_kept then
    quota_log_kept = true
    -- It goes when every window ended: quotas that went (or groups that went quiet) leave nothing.
    redis.call('PEXPIRE', K.quotaLog, keep_ms)
  end
end

-- Adds `n` (starts, or ms of handler time) to `win` at `now` (never before its last entry: a server
-- clock that steps back keeps the order, and only holds longer). `keep_ms`: the longest window in
-- use; what is older than that counts for no quota.
local function window_add(win, field, now, n, keep_ms)
  if win.log then
    local from, to = rate_range(field)
    local last = win.member
      or redis.call('ZRANGE', K.quotaLog, to, from, 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
    local at, total = now, 0
    if last then
      local start, after = string.match(last, '%z(%d+)%z%d+%z(%d+)$')
      at, total = math.max(now, tonumber(start)), tonumber(after)
    end
    win.member = field .. string.format('\0%015d\0%015d\0%d', at, total, total + n)
    win.log = at
    redis.call('ZADD', K.quotaLog, 0, win.member)
    quota_log_keep(keep_ms)
    return
  end
  window_trim(win, now - keep_ms)
  local entry
  if win.n > 0 and math.max(now, win.last_t) == win.last_t then
    -- At its last entry's time (or before it: the clock stepped back): that entry grows.
    local old = string.format('%d:%d', win.last_t, win.total)
    win.total = win.total + n
    entry = string.format('%d:%d', win.last_t, win.total)
    win.body = string.sub(win.body, 1, #win.body - #old) .. entry
  else
    win.last_t, win.total, win.n = now, win.total + n, win.n + 1
    entry = string.format('%d:%d', now, win.total)
    win.body = win.n > 1 and win.body .. ',' .. entry or entry
  end
  if win.n > WINDOW_MAX then
    -- Too long for its field: its entries move to quotaLog, in the rate log's form.
    local args, before = {}, win.before
    for t, total in string.gmatch(win.body, '(%d+):(%d+)') do
      args[#args + 1] = 0
      args[#args + 1] = field .. string.format('\0%015d\0%015d\0%d', tonumber(t), before, tonumber(total))
      before = tonumber(total)
    end
    redis.call('ZADD', K.quotaLog, unpack(args))
    quota_log_keep(keep_ms)
    win.member, win.log = args[#args], win.last_t
  end
end

-- Group -> its parsed state entry ({ running, starts, s, h }) as this call read it.
local state_cache = {}
-- Groups whose entry this call changed, to be written by quota_flush.
local state_dirty, state_order = {}, {}

local function state_parse(text)
  local running, starts, s, h = string.match(text or '', '^(%d+) (%d+)|([^|]*)|([^|]*)$')
  return {
    running = tonumber(running) or 0,
    starts = tonumber(starts) or 0,
    s = window_parse(s or ''),
    h = window_parse(h or ''),
  }
end

-- The state entries of `groups` (one read for those this call has not read yet).
local function group_states(groups)
  local fields, missing = {}, {}
  for _, group in ipairs(groups) do
    if not state_cache[group] and not missing[group] then
      missing[group] = true
      fields[#fields + 1] = 'g' .. group
    end
  end
  if #fields > 0 then
    local texts = redis.call('HMGET', K.groupQuotas, unpack(fields))
    for i, field in ipairs(fields) do
      state_cache[string.sub(field, 2)] = state_parse(texts[i])
    end
  end
end

local function group_state(group)
  if not state_cache[group] then
    state_cache[group] = state_parse(redis.call('HGET', K.groupQuotas, 'g' .. group))
  end
  return state_cache[group]
end

-- Group -> its quota as this call read it ({ max, per, handler }, scaled by its weight), or false.
local quota_cache = {}

-- The quota of `group`: its own, else the default, else none (false); its state is read with it.
local function group_quota(group)
  local quota = quota_cache[group]
  if quota == nil then
    local texts = redis.call('HMGET', K.groupQuotas, 'q' .. group, 'q', 'g' .. group)
    local text = texts[1] or texts[2]
    quota = false
    if text then
      local max, per, scale, handler = string.match(text, '^(%d+) (%d+) (%d) (%d+)$')
      local weight = scale == '1' and tonumber(redis.call('HGET', K.groupWeights, group)) or 1
      handler = tonumber(handler) * weight
      quota = { max = tonumber(max) * weight, per = tonumber(per), handler = handler > 0 and handler or nil }
    end
    quota_cache[group] = quota
    if not state_cache[group] then
      state_cache[group] = state_parse(texts[3])
    end
  end
  return quota
end

local function state_changed(group)
  if not state_dirty[group] then
    state_dirty[group] = true
    state_order[#state_order + 1] = group
  end
end

-- Writes the entries this call changed, and `extra` field-value pairs, in one HSET.
local function quota_flush(extra)
  local args = extra or {}
  for _, group in ipairs(state_order) do
    local state = state_cache[group]
    args[#args + 1] = 'g' .. group
    args[#args + 1] = string.format('%d %d|', state.running, state.starts) .. window_text(state.s) .. '|'
      .. window_text(state.h)
  end
  state_dirty, state_order = {}, {}
  if #args > 0 then
    push_ids('HSET', K.groupQuotas, args)
  end
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
  local state = group_state(group)
  local until_ms
  local used, opens = window_sum(state.s, 's' .. group, rate_span(quota.per), now)
  if used >= quota.max then
    until_ms = opens
  end
  if quota.handler then
    local spent, leaves = window_sum(state.h, 'h' .. group, quota.per, now)
    spent = spent + state.running * now - state.starts
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

-- A group started a message at `now` (in its turn): counted in its window if it has a quota
-- (written by quota_flush). `keep_ms`: the longest window in use (limits' qt).
local function quota_started(group, now, keep_ms)
  if group_quota(group) then
    window_add(group_state(group).s, 's' .. group, now, 1, keep_ms)
    state_changed(group)
  end
end

-- Deliveries leased at `now` (any attempt): those of a group with a handler budget are running.
local function runs_started(ids, now)
  local groups = redis.call('HMGET', K.groupActive, unpack(ids))
  local args, budgeted = {}, {}
  local at = string.format('%d', now)
  for i, group in ipairs(groups) do
    local quota = group and group_quota(group)
    if quota and quota.handler then
      args[#args + 1] = 'i' .. ids[i]
      args[#args + 1] = at .. '\0' .. group
      budgeted[#budgeted + 1] = group
    end
  end
  if #budgeted == 0 then
    return
  end
  group_states(budgeted)
  for _, group in ipairs(budgeted) do
    local state = state_cache[group]
    state.running, state.starts = state.running + 1, state.starts + now
    state_changed(group)
  end
  quota_flush(args)
end

-- Deliveries that ended at `now` (acked, failed, dead, released, deferred, cancelled, lease
-- lost): each running one's handler time (now less its start) is recorded for its group.
local function runs_ended(ids, now)
  local fields = {}
  for i, id in ipairs(ids) do
    fields[i] = 'i' .. id
  end
  local runs = redis.call('HMGET', K.groupQuotas, unpack(fields))
  local ended, ran, groups = {}, {}, {}
  for i, run in ipairs(runs) do
    if run then
      local start, group = string.match(run, '^(%d+)%z(.*)$')
      ended[#ended + 1] = fields[i]
      ran[#ran + 1] = tonumber(start)
      groups[#groups + 1] = group
    end
  end
  if #ended == 0 then
    return
  end
  redis.call('HDEL', K.groupQuotas, unpack(ended))
  group_states(groups)
  local keep_ms = tonumber(redis.call('HGET', K.limits, 'qt'))
  for i, group in ipairs(groups) do
    local state = state_cache[group]
    state.running, state.starts = math.max(state.running - 1, 0), state.starts - ran[i]
    if state.running == 0 then
      state.starts = 0
    end
    local spent = math.max(now - ran[i], 0)
    if keep_ms and spent > 0 then
      window_add(state.h, 'h' .. group, now, spent, keep_ms)
    end
    state_changed(group)
  end
  quota_flush()
end

-- runs_ended for a script that has not read the limits: one EXISTS on a topic without quotas.
local function runs_ended_if_any(ids, now)
  if #ids > 0 and redis.call('EXISTS', K.groupQuotas) == 1 then
    runs_ended(ids, now or now_ms())
  end
end

-- Drops the entries of groups that went quiet (nothing running, every window older than
-- `keep_ms`, the longest in use): `count` entries drawn at random, as Redis expires keys (a
-- reserve that may start `count` groups looks at one more).
local function quota_sweep(now, keep_ms, count)
  local drawn = redis.call('HRANDFIELD', K.groupQuotas, count, 'WITHVALUES')
  local gone = {}
  for i = 1, #drawn, 2 do
    local group = string.match(drawn[i], '^g(.*)$')
    if group and not state_cache[group] then
      -- Its running count and each window's last time, read from their heads only.
      local running, starts, hits = string.match(drawn[i + 1], '^(%d+) %d+|([^|]*)|([^|]*)$')
      local quiet = running == '0'
      for _, text in ipairs({ starts or '', hits or '' }) do
        local last = string.match(text, '^L(%d+)$') or string.match(text, '^%d+ (%d+) ')
        if last and tonumber(last) > now - keep_ms then
          quiet = false
        end
      end
      if quiet then
        gone[#gone + 1] = drawn[i]
        for field, text in pairs({ ['s' .. group] = starts, ['h' .. group] = hits }) do
          if string.byte(text) == 76 then
            redis.call('ZREMRANGEBYLEX', K.quotaLog, rate_range(field))
          end
        end
      end
    end
  end
  if #gone > 0 then
    redis.call('HDEL', K.groupQuotas, unpack(gone))
  end
end
