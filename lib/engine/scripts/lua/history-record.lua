-- history-record: adds what one process counted, minute by minute, to a topic's history
-- (see history-format.ts) and to its usage per group (see group-usage-format.ts). Each minute
-- lives in the field <minute % slots> of each hash: a field that holds another (older) minute is
-- overwritten, so neither hash grows past `slots`. A minute outside [now - slots + 1, now + 1]
-- (a client clock far off) is dropped.
--
-- K.history K.groupUsage K.groupUsageOpen
-- ARGV[1]  slots    fields kept (minutes)
-- ARGV[2]  ttlMs    the key expires this long after its last write
-- ARGV[3..] per minute, 12 arguments: the 10 of the stored order (minute, the five counts, the two
--          sums (ms), the two bucket lists ('<index>:<count>' joined by ',')), then the messages
--          expired (start-by deadline passed), added to the field 'x<minute % slots>' as
--          '<minute>|<count>' (a field of its own: the main record keeps the layout older releases read),
--          then the groups' counts, '\0<group>\0<handled>,<ms>,<retried>,<dead>' each (trailing zeros
--          left out; '' when no group counted), merged by group into the minute's slot of
--          K.groupUsage, or, for the minute counting now and the one before, into its open hash (see below)
-- Returns  the server's time (ms), from which the client learns its clock's offset
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.history, 'hash', K.groupUsage, 'hash')

local slots, ttl_ms = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
local this_minute = math.floor(now / 60000)

local function split(text)
  local parts, start = {}, 1
  while true do
    local bar = string.find(text, '|', start, true)
    if not bar then
      parts[#parts + 1] = string.sub(text, start)
      return parts
    end
    parts[#parts + 1] = string.sub(text, start, bar - 1)
    start = bar + 1
  end
end

local function add_buckets(stored, added)
  if stored == '' then return added end
  if added == '' then return stored end
  local counts, order = {}, {}
  for _, list in ipairs({ stored, added }) do
    for index, n in string.gmatch(list, '(%d+):(%d+)') do
      index = tonumber(index)
      if not counts[index] then
        counts[index] = 0
        order[#order + 1] = index
      end
      counts[index] = counts[index] + tonumber(n)
    end
  end
  table.sort(order)
  local pairs_out = {}
  for i, index in ipairs(order) do
    pairs_out[i] = string.format('%d:%d', index, counts[index])
  end
  return table.concat(pairs_out, ',')
end

-- The sum of two counts texts ('<handled>,<ms>,<retried>,<dead>', trailing zeros left out), as one.
local function add_counts(a, b)
  local a1, a2, a3, a4 = string.match(a, '^(%d*),?(%d*),?(%d*),?(%d*)')
  local b1, b2, b3, b4 = string.match(b, '^(%d*),?(%d*),?(%d*),?(%d*)')
  local c = {
    (tonumber(a1) or 0) + (tonumber(b1) or 0),
    (tonumber(a2) or 0) + (tonumber(b2) or 0),
    (tonumber(a3) or 0) + (tonumber(b3) or 0),
    (tonumber(a4) or 0) + (tonumber(b4) or 0),
  }
  local last = 4
  while last > 1 and c[last] == 0 do
    last = last - 1
  end
  return table.concat(c, ',', 1, last)
end

-- Adds `added` (a minute's groups) to that minute's slot of the ring: a slot that holds another
-- minute is overwritten; the same minute (a late flush) is merged by group, first seen first.
local function add_groups(minute, added)
  local field = string.format('%d', minute % slots)
  local head = string.format('%d', minute)
  local stored = redis.call('HGET', K.groupUsage, field)
  if not stored or string.match(stored, '^%d+') ~= head then
    redis.call('HSET', K.groupUsage, field, head .. added)
    return
  end
  local values, order = {}, {}
  for group, counts in string.gmatch(stored, '%z([^%z]+)%z([^%z]*)') do
    values[group] = counts
    order[#order + 1] = group
  end
  for group, counts in string.gmatch(added, '%z([^%z]+)%z([^%z]*)') do
    local old = values[group]
    if old then
      values[group] = add_counts(old, counts)
    else
      values[group] = counts
      order[#order + 1] = group
    end
  end
  local out = { head }
  for i, group in ipairs(order) do
    out[i + 1] = '\0' .. group .. '\0' .. values[group]
  end
  redis.call('HSET', K.groupUsage, field, table.concat(out))
end

-- The minute being counted now and the one before (every process sends the last second of a
-- minute after it ended), and the next (a clock a little ahead), are open: their groups are fields
-- of a hash of their own (K.groupUsageOpen .. minute, in the topic's hash tag), so a flush costs a
-- field per group it sent, whatever the number of groups in the minute. The ring field 'open'
-- lists the open minutes; each call first seals those older than that into their ring slot.
local open_minutes = {}
for m in string.gmatch(redis.call('HGET', K.groupUsage, 'open') or '', '%d+') do
  open_minutes[#open_minutes + 1] = tonumber(m)
end
local open_changed = false
local still_open, is_open = {}, {}
for _, m in ipairs(open_minutes) do
  local key = K.groupUsageOpen .. string.format('%d', m)
  if m < this_minute - 1 then
    local fields = redis.call('HGETALL', key)
    if #fields > 0 and m > this_minute - slots then
      local out = {}
      for i = 1, #fields, 2 do
        out[#out + 1] = '\0' .. fields[i] .. '\0' .. fields[i + 1]
      end
      add_groups(m, table.concat(out))
    end
    redis.call('DEL', key)
    open_changed = true
  else
    still_open[#still_open + 1] = m
    is_open[m] = true
  end
end

-- Adds `added` to the open minute `minute`.
local function add_open(minute, added)
  local key = K.groupUsageOpen .. string.format('%d', minute)
  if not is_open[minute] then
    is_open[minute] = true
    still_open[#still_open + 1] = minute
    open_changed = true
  end
  local names, values = {}, {}
  for group, counts in string.gmatch(added, '%z([^%z]+)%z([^%z]*)') do
    names[#names + 1] = group
    values[#values + 1] = counts
  end
  for first = 1, #names, 500 do
    local last = math.min(first + 499, #names)
    local stored = redis.call('HMGET', key, unpack(names, first, last))
    local pairs_out = {}
    for i = first, last do
      local old = stored[i - first + 1]
      pairs_out[#pairs_out + 1] = names[i]
      pairs_out[#pairs_out + 1] = old and add_counts(old, values[i]) or values[i]
    end
    redis.call('HSET', key, unpack(pairs_out))
  end
  redis.call('PEXPIRE', key, ttl_ms)
end

local wrote, wrote_groups = false, false
for g = 3, #ARGV - 11, 12 do
  local minute = tonumber(ARGV[g])
  if minute and minute > this_minute - slots and minute <= this_minute + 1 then
    local field = string.format('%d', minute % slots)
    local record = { unpack(ARGV, g, g + 9) }
    local stored = redis.call('HGET', K.history, field)
    if stored then
      local old = split(stored)
      if #old == 10 and tonumber(old[1]) == minute then
        for i = 2, 6 do
          record[i] = string.format('%d', (tonumber(old[i]) or 0) + (tonumber(record[i]) or 0))
        end
        for i = 7, 8 do
          record[i] = tostring((tonumber(old[i]) or 0) + (tonumber(record[i]) or 0))
        end
        record[9] = add_buckets(old[9], record[9])
        record[10] = add_buckets(old[10], record[10])
      end
    end
    redis.call('HSET', K.history, field, table.concat(record, '|'))
    local expired = tonumber(ARGV[g + 10]) or 0
    if expired > 0 then
      local extra = 'x' .. field
      local kept = split(redis.call('HGET', K.history, extra) or '')
      if tonumber(kept[1]) == minute then
        expired = expired + (tonumber(kept[2]) or 0)
      end
      redis.call('HSET', K.history, extra, string.format('%d|%d', minute, expired))
    end
    if ARGV[g + 11] ~= '' then
      if minute >= this_minute - 1 then
        add_open(minute, ARGV[g + 11])
      else
        add_groups(minute, ARGV[g + 11])
      end
      wrote_groups = true
    end
    wrote = true
  end
end
if wrote then
  redis.call('PEXPIRE', K.history, ttl_ms)
end
if open_changed then
  if #still_open > 0 then
    table.sort(still_open)
    redis.call('HSET', K.groupUsage, 'open', table.concat(still_open, ' '))
  else
    redis.call('HDEL', K.groupUsage, 'open')
  end
end
if wrote_groups or open_changed then
  redis.call('PEXPIRE', K.groupUsage, ttl_ms)
end
return now
