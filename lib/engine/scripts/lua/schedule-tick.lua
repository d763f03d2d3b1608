-- schedule-tick: runs one tick of a schedule, at most once: only while the schedule still has
-- the caller's definition and pending tick (a compare-and-set), and only once the tick is due
-- by the server clock. It pushes the tick's message (ready at once, as push.lua would store
-- it; an id that exists is not pushed twice), records the tick and sets the next one. A tick
-- at or before the last one run is never pushed again (an older process's upsert may have
-- set one pending): the schedule just moves on to the next tick. A definition with a deadline
-- ("l": expiresInMs, "o": 'drop' or absent) gives the message the start-by deadline tick + l: a
-- tick pushed late (after an outage) past it is stored already expired, and the next reserve
-- ends it as onExpire says, so a stale tick never runs.
--
-- K.schedules K.scheduleDue K.scheduleLast K.messages K.ready K.wake K.counters K.deadlines K.expiring
-- ARGV[1] name          the schedule's name
-- ARGV[2] definition    the definition the caller computed the ticks from (JSON text)
-- ARGV[3] expected      the pending tick the caller saw (ms)
-- ARGV[4] tick          the tick to run (ms): the pending one, or a later missed one
-- ARGV[5] nextRunAt     the tick after it (ms), or -1 for none
-- ARGV[6] id            the message id
-- ARGV[7] body          JSON object text starting with '{"p":'; enqueuedAt is added as "t"
-- Returns  { 1 ran, 0 stale (another definition or pending tick, or a tick already run: reload),
--          2 not due yet; now (ms) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.schedules, 'hash', K.scheduleDue, 'zset', K.scheduleLast, 'hash', K.messages, 'hash', K.ready, 'list', K.wake, 'list',
  K.counters, 'hash', K.deadlines, 'hash', K.expiring, 'zset')

local name, definition = ARGV[1], ARGV[2]

-- The start-by deadline `from` + the definition's "l" (ms), if it has one, for message `id`:
-- '<ms>' or '<ms>:drop' in K.deadlines, and the id in K.expiring for reserve's sweep.
local function schedule_deadline(text, id, from)
  if not string.find(text, '"l":', 1, true) then
    return
  end
  local ok, spec = pcall(cjson.decode, text)
  if not ok or type(spec) ~= 'table' or type(spec.l) ~= 'number' then
    return
  end
  local at = string.format('%d', from + spec.l)
  redis.call('HSET', K.deadlines, id, spec.o == 'drop' and at .. ':drop' or at)
  redis.call('ZADD', K.expiring, at, id)
end
local expected, tick, next_run = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local now = now_ms()

if redis.call('HGET', K.schedules, name) ~= definition or tonumber(redis.call('ZSCORE', K.scheduleDue, name)) ~= expected then
  return { 0, now }
end
if tick > now then
  return { 2, now }
end
local function set_next()
  if next_run >= 0 then
    redis.call('ZADD', K.scheduleDue, ARGV[5], name)
  else
    redis.call('ZREM', K.scheduleDue, name)
  end
end
if tick <= (tonumber(redis.call('HGET', K.scheduleLast, name)) or -1) then
  set_next()
  return { 0, now }
end

local id = ARGV[6]
if redis.call('HSETNX', K.messages, id, '{"t":' .. now .. ',' .. string.sub(ARGV[7], 2)) == 1 then
  schedule_deadline(definition, id, tick)
  redis.call('RPUSH', K.ready, id)
  redis.call('HINCRBY', K.counters, 'pushed', 1)
  wake()
end
redis.call('HSET', K.scheduleLast, name, ARGV[4])
set_next()
return { 1, now }
