-- flow-notify: a parent hears how one of its children ended (the child's outbox entry; the
-- child may live in another slot). The child's field records it unless it holds a later end
-- already. Then, while the parent waits: a dead child that fails it ('f' policy) sends it to the
-- dead letters as 'child-failed'; once every child ended and none fails it, it becomes due (now
-- + its delayMs, or its availableAt: ready at once when that is now). A parent dead as
-- 'child-failed' whose failed children all ended well since (requeued) comes back: due, or
-- waiting for the rest.
--
-- K.delayed K.wake K.paused K.dead K.deadInfo K.flowChildren K.flowWaiting
-- ARGV[1] id            the parent
-- ARGV[2] field         the child's field in the parent's HASH
-- ARGV[3] seq           the sequence of the child's end
-- ARGV[4] outcome       'a' acked, 'f' dead or cancelled
-- ARGV[5] policy        the child's onChildFailure: 'f' fail the parent, 'c' continue
-- ARGV[6] payload       the child's result (complete.lua's extra) or why it failed (JSON)
-- ARGV[7] error         the text a parent sent to the dead letters keeps
-- ARGV[8] deadMaxCount  dead letters kept at most
-- ARGV[9] deadMaxAgeMs  dead letters older than this are deleted
-- ARGV[10] child        the child, when it lives in this slot: its outbox entry is dropped here
--                       (as flow-clear.lua does), so the end costs no call of its own; '' else
-- Returns 0 nothing to hear (the parent ended, or a later end was heard), 1 recorded, { 2, the
--         outbox entries written (the parent's own end, when it is a child: for the caller to
--         pass on) } the parent went to the dead letters, 3 it became due, 4 it came back to
--         waiting
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id, field, seq, outcome, policy = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local key = K.flowChildren .. id
check_types(key, 'hash', K.delayed, 'zset', K.dead, 'zset', K.deadInfo, 'hash', K.flowWaiting, 'zset')

if ARGV[10] and ARGV[10] ~= '' then
  outbox_heard(ARGV[10], ARGV[3])
end

local current = redis.call('HGET', key, field)
if not current then
  return 0
end
local pending_change, failing_change = 0, 0
if current == 'p' then
  pending_change = -1
else
  local heard, was = string.match(current, '^(%d+)\n(%a%a)')
  if tonumber(heard) >= seq then
    return 0
  end
  if was == 'ff' then
    failing_change = -1
  end
end
if outcome == 'f' and policy == 'f' then
  failing_change = failing_change + 1
end
redis.call('HSET', key, field, seq .. '\n' .. outcome .. policy .. '\n' .. ARGV[6])
local pending = tonumber(redis.call('HINCRBY', key, '#', pending_change))
local failing = tonumber(redis.call('HINCRBY', key, '!', failing_change))

local now = now_ms()
local waiting = redis.call('ZSCORE', K.flowWaiting, id)
local resumable = false
if not waiting and redis.call('ZSCORE', K.dead, id) then
  local ok, info = pcall(cjson.decode, redis.call('HGET', K.deadInfo, id) or '')
  resumable = ok and type(info) == 'table' and info.r == 'child-failed'
end

-- A waiting parent fails when this end fails it; a parent requeued from the dead letters waits
-- with failed children counted until their requeued runs end well (flow-resume.lua).
if waiting and outcome == 'f' and policy == 'f' then
  redis.call('ZREM', K.flowWaiting, id)
  redis.call('ZREM', K.delayed, id)
  message_dead(id, 'child-failed', ARGV[7], 0, nil, now, tonumber(ARGV[8]), tonumber(ARGV[9]))
  return { 2, flow_ended }
end
if failing > 0 or not (waiting or resumable) then
  return 1
end
if resumable then
  redis.call('ZREM', K.dead, id)
  redis.call('HDEL', K.deadInfo, id)
end
if pending > 0 then
  if resumable then
    redis.call('ZADD', K.delayed, FLOW_HELD, id)
    redis.call('ZADD', K.flowWaiting, now, id)
    return 4
  end
  return 1
end
redis.call('ZREM', K.flowWaiting, id)
local delay, at = string.match(redis.call('HGET', key, '@') or '', '^(%d+) (%d+)$')
flow_release(id, math.max(now + (tonumber(delay) or 0), tonumber(at) or 0), now)
if redis.call('EXISTS', K.paused) == 0 then
  wake()
end
return 3
