-- flow-resume: a parent dead as child-failed is requeued (requeueDead): once its failed children
-- were requeued from their dead letters (the caller did that first), it leaves the dead letters to
-- wait for them (waiting-children), or becomes due when none is left to wait for. It stays dead
-- when a failed child ended badly again since the caller looked (its end's sequence is later than
-- the one given), or when it no longer is a dead letter as child-failed.
--
-- K.dead K.deadInfo K.attempts K.delayed K.flowChildren K.flowWaiting K.wake K.paused
-- ARGV[1] id      the parent
-- ARGV[2..] pairs (field, sequence): each failed child's field in the parent's HASH and the
--         sequence of the end the caller saw there before requeueing it
-- Returns 0 it stays dead, 1 it waits for its children, 2 it became due
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id = ARGV[1]
local key = K.flowChildren .. id
check_types(key, 'hash', K.dead, 'zset', K.deadInfo, 'hash', K.delayed, 'zset', K.flowWaiting, 'zset')

if not redis.call('ZSCORE', K.dead, id) or redis.call('EXISTS', key) == 0 then
  return 0
end
local ok, info = pcall(cjson.decode, redis.call('HGET', K.deadInfo, id) or '')
if not (ok and type(info) == 'table' and info.r == 'child-failed') then
  return 0
end
for i = 2, #ARGV, 2 do
  local heard, kinds = string.match(redis.call('HGET', key, ARGV[i]) or '', '^(%d+)\n(%a%a)')
  if kinds == 'ff' and tonumber(heard) > tonumber(ARGV[i + 1]) then
    return 0
  end
end
redis.call('ZREM', K.dead, id)
redis.call('HDEL', K.deadInfo, id)
redis.call('HDEL', K.attempts, id)
local now = now_ms()
local counts = redis.call('HMGET', key, '#', '!', '@')
if (tonumber(counts[1]) or 0) > 0 or (tonumber(counts[2]) or 0) > 0 then
  redis.call('ZADD', K.delayed, FLOW_HELD, id)
  redis.call('ZADD', K.flowWaiting, now, id)
  return 1
end
local delay, at = string.match(counts[3] or '', '^(%d+) (%d+)$')
flow_release({ id }, { math.max(now + (tonumber(delay) or 0), tonumber(at) or 0) }, now)
if redis.call('EXISTS', K.paused) == 0 then
  wake()
end
return 2
