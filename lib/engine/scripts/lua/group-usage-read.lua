-- group-usage-read: one page of the stored minutes of a topic's usage per group (see
-- group-usage-format.ts) that fall in a range of minutes. The range's ends default to the server's
-- clock as history-read's do (`to` to now, `from` to `last` before the end of `to`'s minute), are
-- rounded down to a minute, and stop at now and at the oldest minute kept. At most `page` minutes
-- are read per call, so a long range never blocks the server for long: the caller asks again
-- from `next`. The minutes still open (see history-record.lua) are read from their own hashes.
--
-- K.groupUsage K.groupUsageOpen
-- ARGV[1]  slots    fields kept (minutes)
-- ARGV[2]  from     epoch ms, or '' for `last` before the end of `to`'s minute
-- ARGV[3]  to       epoch ms, or '' for now
-- ARGV[4]  last     the range's length (ms) when `from` is ''
-- ARGV[5]  page     the most minutes read by this call
-- Returns  { from, to, next, minute... }: the first and last minutes' starts (ms); the start of
--          the first minute not read yet, -1 when the page reached `to`; then the stored minutes
--          of this page ('<minute>' then '\0<group>\0<counts>' per group), oldest first
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.groupUsage, 'hash')

local slots, page = tonumber(ARGV[1]), tonumber(ARGV[5])
local now = now_ms()
local this_minute = math.floor(now / 60000)
local to = math.min(ARGV[3] ~= '' and tonumber(ARGV[3]) or now, now)
to = to - to % 60000
local from
if ARGV[2] ~= '' then
  from = tonumber(ARGV[2])
  from = from - from % 60000
else
  from = to - math.ceil(tonumber(ARGV[4]) / 60000) * 60000 + 60000
end
local oldest = (this_minute - slots + 1) * 60000
if from < oldest then
  from = oldest
end
local first = from / 60000
local last = to / 60000
local out = { from, to, -1 }
if first > last then return out end
if last - first + 1 > page then
  last = first + page - 1
  out[3] = (last + 1) * 60000
end
local fields = {}
for minute = first, last do
  fields[#fields + 1] = string.format('%d', minute % slots)
end
local stored = redis.call('HMGET', K.groupUsage, 'open', unpack(fields))
local is_open = {}
for m in string.gmatch(stored[1] or '', '%d+') do
  is_open[tonumber(m)] = true
end
for i = 1, #fields do
  local minute = first + i - 1
  local text = stored[i + 1]
  if is_open[minute] then
    local key = K.groupUsageOpen .. string.format('%d', minute)
    local kept = redis.call('HGETALL', key)
    local parts = { string.format('%d', minute) }
    for j = 1, #kept, 2 do
      parts[#parts + 1] = '\0' .. kept[j] .. '\0' .. kept[j + 1]
    end
    if #parts > 1 then
      out[#out + 1] = table.concat(parts)
    end
  elseif text and tonumber(string.match(text, '^(%d+)')) == minute then
    out[#out + 1] = text
  end
end
return out
