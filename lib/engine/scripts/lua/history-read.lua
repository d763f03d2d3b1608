-- history-read: the stored minutes of a topic's history that fall in a range of steps. The
-- range's ends default to the server's clock: `to` to now, `from` to `last` before the end of
-- `to`'s step; both are rounded down to a multiple of the step; a `to` after now is now, and
-- a `from` before the oldest minute kept is the first step after it.
--
-- K.history
-- ARGV[1]  slots    fields kept (minutes)
-- ARGV[2]  stepMs   a whole number of minutes (ms)
-- ARGV[3]  from     epoch ms, or '' for `last` before the end of `to`'s step
-- ARGV[4]  to       epoch ms, or '' for now
-- ARGV[5]  last     the range's length (ms) when `from` is 
-- Returns  { from, to, record... }: the first and last steps' starts (ms), then the records of
--          minutes from `from` to the end of the step that starts at `to`, each with '|<expired>'
--          appended where its minute counted expired messages (the field 'x<slot>')
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.history, 'hash')

local slots, step = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
local this_minute = math.floor(now / 60000)
-- Nothing is kept before the oldest minute nor after now: the range stops there.
local to = math.min(ARGV[4] ~= '' and tonumber(ARGV[4]) or now, now)
to = to - to % step
local from
if ARGV[3] ~= '' then
  from = tonumber(ARGV[3])
  from = from - from % step
else
  from = to - math.ceil(tonumber(ARGV[5]) / step) * step + step
end
local oldest = (this_minute - slots + 1) * 60000
if from < oldest then
  from = oldest + (step - oldest % step) % step
end
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
local extras = {}
for i = 1, #fields do
  extras[i] = 'x' .. fields[i]
end
extras = redis.call('HMGET', K.history, unpack(extras))
for i = 1, #fields do
  local record = stored[i]
  if record then
    local minute = tonumber(string.match(record, '^(%d+)|'))
    if minute and minute >= first and minute <= last then
      local expired_minute, expired = string.match(extras[i] or '', '^(%d+)|(%d+)$')
      if tonumber(expired_minute) == minute then
        record = record .. '|' .. expired
      end
      out[#out + 1] = record
    end
  end
end
return out
