-- schedule-run: pushes a schedule's message now, out of turn ("run now"), as a tick would
-- store it (ready at once; an id that exists is not pushed twice). The schedule's pending and
-- last ticks stay as they are: its next tick still runs when due.
--
-- KEYS[1] schedules     HASH  schedule name -> definition (JSON; its "b" is the stored body)
-- KEYS[2] messages      HASH  id -> stored body
-- KEYS[3] ready         LIST  ids waiting, head first
-- KEYS[4] wake          LIST  wake-up token for blocked consumers
-- KEYS[5] counters      HASH  pushed -> messages stored so far
-- ARGV[1] name          the schedule's name
-- ARGV[2] id            the message id
-- Returns  { 1 pushed, 0 duplicate id, -1 no such schedule (or one this library did not write); now (ms) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_SCHEDULES, K_MESSAGES, K_READY, K_WAKE, K_COUNTERS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
check_types(K_SCHEDULES, 'hash', K_MESSAGES, 'hash', K_READY, 'list', K_WAKE, 'list', K_COUNTERS, 'hash')

local now = now_ms()
local definition = redis.call('HGET', K_SCHEDULES, ARGV[1])
if not definition then
  return { -1, now }
end
local ok, decoded = pcall(cjson.decode, definition)
if not ok or type(decoded) ~= 'table' or type(decoded.b) ~= 'string' then
  return { -1, now }
end

local id = ARGV[2]
if redis.call('HSETNX', K_MESSAGES, id, '{"t":' .. now .. ',' .. string.sub(decoded.b, 2)) == 0 then
  return { 0, now }
end
redis.call('RPUSH', K_READY, id)
redis.call('HINCRBY', K_COUNTERS, 'pushed', 1)
wake(K_WAKE)
return { 1, now }
