-- schedule-run: pushes a schedule's message now, out of turn ("run now"), as a tick would
-- store it (ready at once; an id that exists is not pushed twice). The schedule's pending and
-- last ticks stay as they are: its next tick still runs when due. A definition with a deadline
-- ("l": expiresInMs, "o": 'drop' or absent) gives the message the start-by deadline now + l.
--
-- K.schedules K.messages K.ready K.wake K.counters K.deadlines K.expiring
-- ARGV[1] name          the schedule's name
-- ARGV[2] id            the message id
-- Returns  { 1 pushed, 0 duplicate id, -1 no such schedule (or one this library did not write); now (ms) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.schedules, 'hash', K.messages, 'hash', K.ready, 'list', K.wake, 'list', K.counters, 'hash',
  K.deadlines, 'hash', K.expiring, 'zset')

local now = now_ms()
local definition = redis.call('HGET', K.schedules, ARGV[1])
if not definition then
  return { -1, now }
end
local ok, decoded = pcall(cjson.decode, definition)
if not ok or type(decoded) ~= 'table' or type(decoded.b) ~= 'string' then
  return { -1, now }
end

local id = ARGV[2]
if redis.call('HSETNX', K.messages, id, '{"t":' .. now .. ',' .. string.sub(decoded.b, 2)) == 0 then
  return { 0, now }
end
if type(decoded.l) == 'number' then
  local at = string.format('%d', now + decoded.l)
  redis.call('HSET', K.deadlines, id, decoded.o == 'drop' and at .. ':drop' or at)
  redis.call('ZADD', K.expiring, at, id)
end
redis.call('RPUSH', K.ready, id)
redis.call('HINCRBY', K.counters, 'pushed', 1)
wake()
return { 1, now }
