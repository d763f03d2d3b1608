-- schedule-tick: runs one tick of a schedule, at most once: only while the schedule still has
-- the caller's definition and pending tick (a compare-and-set), and only once the tick is due
-- by the server clock. It pushes the tick's message (ready at once, as push.lua would store
-- it; an id that exists is not pushed twice), records the tick and sets the next one.
--
-- KEYS[1] schedules     HASH  schedule name -> definition (JSON)
-- KEYS[2] scheduleDue   ZSET  schedule name -> next tick (ms, server clock)
-- KEYS[3] scheduleLast  HASH  schedule name -> last tick that pushed a message (ms)
-- KEYS[4] messages      HASH  id -> stored body
-- KEYS[5] ready         LIST  ids waiting, head first
-- KEYS[6] wake          LIST  wake-up token for blocked consumers
-- KEYS[7] counters      HASH  pushed -> messages stored so far
-- ARGV[1] name          the schedule's name
-- ARGV[2] definition    the definition the caller computed the ticks from (JSON text)
-- ARGV[3] expected      the pending tick the caller saw (ms)
-- ARGV[4] tick          the tick to run (ms): the pending one, or a later missed one
-- ARGV[5] nextRunAt     the tick after it (ms), or -1 for none
-- ARGV[6] id            the message id
-- ARGV[7] body          JSON object text starting with '{"p":'; enqueuedAt is added as "t"
-- Returns  { 1 ran, 0 stale (another definition or pending tick: reload), 2 not due yet; now (ms) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local K_SCHEDULES, K_DUE, K_LAST, K_MESSAGES, K_READY, K_WAKE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local K_COUNTERS = KEYS[7]
check_types(K_SCHEDULES, 'hash', K_DUE, 'zset', K_LAST, 'hash', K_MESSAGES, 'hash', K_READY, 'list', K_WAKE, 'list',
  K_COUNTERS, 'hash')

local name, definition = ARGV[1], ARGV[2]
local expected, tick, next_run = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local now = now_ms()

if redis.call('HGET', K_SCHEDULES, name) ~= definition or tonumber(redis.call('ZSCORE', K_DUE, name)) ~= expected then
  return { 0, now }
end
if tick > now then
  return { 2, now }
end

local id = ARGV[6]
if redis.call('HSETNX', K_MESSAGES, id, '{"t":' .. now .. ',' .. string.sub(ARGV[7], 2)) == 1 then
  redis.call('RPUSH', K_READY, id)
  redis.call('HINCRBY', K_COUNTERS, 'pushed', 1)
  wake(K_WAKE)
end
redis.call('HSET', K_LAST, name, ARGV[4])
if next_run >= 0 then
  redis.call('ZADD', K_DUE, ARGV[5], name)
else
  redis.call('ZREM', K_DUE, name)
end
return { 1, now }
