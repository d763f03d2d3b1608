-- schedule-upsert: creates or changes one schedule of a topic. The same definition again
-- changes nothing, so every instance may upsert its schedules at startup without moving the
-- pending tick. A new definition sets the pending tick by the server clock, never to a tick
-- already run (that tick would push twice) and never past a tick already due and not yet run
-- (that tick would be lost): a due pending tick stays, and runs once with the new definition.
-- An everyMs schedule's next tick is computed here from its definition; a cron schedule's comes
-- from the caller's candidates (croner runs in the client).
--
-- K.schedules K.scheduleDue K.scheduleLast
-- ARGV[1] name          the schedule's name
-- ARGV[2] definition    its definition (JSON text, compared as text)
-- ARGV[3] after         cron: the candidates are the schedule's first ticks strictly after this (ms)
-- ARGV[4] complete      cron: 1 when the candidates are every tick left after `after`, else 0
-- ARGV[5..] candidates  cron: ticks (ms), ascending; none for everyMs
-- Returns  { 1 changed or 0 unchanged, nextRunAt or -1, lastRunAt or -1, now (ms) }, or
--          { -1, from, lastRunAt or -1, now } when the cron candidates may miss a tick: call
--          again with candidates strictly after `from`
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.schedules, 'hash', K.scheduleDue, 'zset', K.scheduleLast, 'hash')

local name, definition = ARGV[1], ARGV[2]
local now = now_ms()
local last = tonumber(redis.call('HGET', K.scheduleLast, name)) or -1
local pending = tonumber(redis.call('ZSCORE', K.scheduleDue, name))

if redis.call('HGET', K.schedules, name) == definition then
  return { 0, pending or -1, last, now }
end

local spec = cjson.decode(definition)
-- The new tick comes after both the server's now and the last tick run.
local from = math.max(now, last)
local next_run = -1
if pending and pending <= now and pending > last and pending >= (spec.s or pending) and pending <= (spec.x or pending) then
  next_run = pending
elseif type(spec.e) == 'number' then
  local anchor = spec.s or 0
  local first = math.max(from + 1, anchor)
  local tick = anchor + math.ceil((first - anchor) / spec.e) * spec.e
  if not spec.x or tick <= spec.x then
    next_run = tick
  end
else
  if tonumber(ARGV[3]) > from then
    return { -1, from, last, now }
  end
  for i = 5, #ARGV do
    if tonumber(ARGV[i]) > from then
      next_run = tonumber(ARGV[i])
      break
    end
  end
  if next_run < 0 and ARGV[4] ~= '1' then
    return { -1, from, last, now }
  end
end

redis.call('HSET', K.schedules, name, definition)
if next_run >= 0 then
  redis.call('ZADD', K.scheduleDue, string.format('%.0f', next_run), name)
else
  redis.call('ZREM', K.scheduleDue, name)
end
return { 1, next_run, last, now }
