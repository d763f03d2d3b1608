-- history-record: adds what one process counted, minute by minute, to a topic's history
-- (see history-format.ts) and to its usage per group (see group-usage-format.ts). Each minute
-- lives in the field <minute % slots> of each hash: a field that holds another (older) minute is
-- overwritten, so neither hash grows past `slots`. A minute outside [now - slots + 1, now + 1]
-- (a client clock far off) is dropped.
--
-- K.history K.groupUsage
-- ARGV[1]  slots    fields kept (minutes)
-- ARGV[2]  ttlMs    the key expires this long after its last write
-- ARGV[3..] per minute, 12 arguments: the 10 of the stored order (minute, the five counts, the two
--          sums (ms), the two bucket lists ('<index>:<count>' joined by ',')), then the messages
--          expired (start-by deadline passed), added to the field 'x<minute % slots>' as
--          '<minute>|<count>' (a field of its own: the main record keeps the layout older releases read),
--          then the groups' counts, '\0<group>\0<handled>,<ms>,<retried>,<dead>' each (trailing zeros
--          left out; '' when no group counted), merged by group into K.groupUsage
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

-- Adds `added` (a minute's groups) to the field `field` of K.groupUsage: a new minute is written
-- as it comes; the same minute is merged by group, first seen first.
local function add_groups(minute, field, added)
  local stored = redis.call('HGET', K.groupUsage, field)
  local head = string.format('%d', minute)
  if not stored or string.match(stored, '^%d+') ~= head then
    redis.call('HSET', K.groupUsage, field, head .. added)
    return
  end
  local counts, order = {}, {}
  for _, list in ipairs({ stored, added }) do
    for group, values in string.gmatch(list, '%z([^%z]+)%z([^%z]*)') do
      local c = counts[group]
      if not c then
        c = { 0, 0, 0, 0 }
        counts[group] = c
        order[#order + 1] = group
      end
      local i = 1
      for n in string.gmatch(values, '[^,]+') do
        if i > 4 then break end
        c[i] = c[i] + (tonumber(n) or 0)
        i = i + 1
      end
    end
  end
  local out = { head }
  for i, group in ipairs(order) do
    local c = counts[group]
    local last = 4
    while last > 1 and c[last] == 0 do
      last = last - 1
    end
    out[i + 1] = '\0' .. group .. '\0' .. table.concat(c, ',', 1, last)
  end
  redis.call('HSET', K.groupUsage, field, table.concat(out))
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
      add_groups(minute, field, ARGV[g + 11])
      wrote_groups = true
    end
    wrote = true
  end
end
if wrote then
  redis.call('PEXPIRE', K.history, ttl_ms)
end
if wrote_groups then
  redis.call('PEXPIRE', K.groupUsage, ttl_ms)
end
return now
