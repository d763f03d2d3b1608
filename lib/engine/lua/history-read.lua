-- history-read: the stored minutes of a topic's history that fall in a range of steps. The
-- range's ends default to the server's clock: `to` to now, `from` to an hour before `to`; a
-- `to` after now is now, a `from` before the oldest minute kept is the first step after it;
-- both are then rounded down to a multiple of the step.
--
-- K.history     HASH   minute % slots -> 'minute|...' (see history-record.lua)
-- ARGV[1]  slots    fields kept (minutes)
-- ARGV[2]  stepMs   a whole number of minutes (ms)
-- ARGV[3]  from     epoch ms, or '' for an hour before `to`
-- ARGV[4]  to       epoch ms, or '' for now
-- Returns  { from, to, record... }: the first and last steps' starts (ms), then the records of
--          minutes from `from` to the end of the step that starts at `to`
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.history, 'hash')

local slots, step = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
local this_minute = math.floor(now / 60000)
-- Nothing is kept before the oldest minute nor after now: the range stops there.
local to = math.min(ARGV[4] ~= '' and tonumber(ARGV[4]) or now, now)
local from = ARGV[3] ~= '' and tonumber(ARGV[3]) or to - 3600000
local oldest = (this_minute - slots + 1) * 60000
if from < oldest then
  from = oldest + (step - oldest % step) % step
end
to = to - to % step
from = from - from % step
local out = { from, to }
local first = from / 60000
local last = math.min((to + step) / 60000 - 1, this_minute + 1)
if first > last then return out end
local fields = {}
for minute = first, last do
  fields[#fields + 1] = string.format('%d', minute % slots)
  if #fields == slots then break end
end
local stored = redis.call('HMGET', K.history, unpack(fields))
for i = 1, #fields do
  local record = stored[i]
  if record then
    local minute = tonumber(string.match(record, '^(%d+)|'))
    if minute and minute >= first and minute <= last then
      out[#out + 1] = record
    end
  end
end
return out
