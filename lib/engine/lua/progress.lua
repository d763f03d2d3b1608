-- progress: stores a leased message's progress value, only while the given token is still its
-- lease. A few other entries picked at random are deleted when their message holds no lease
-- any more (acked, retried or cancelled by a path that does not know of progress), so the hash
-- stays about as large as the set of leases that report progress.
--
-- KEYS[1] tokens    HASH  id -> token of the current lease
-- KEYS[2] progress  HASH  id -> JSON progress value of a leased message
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] value  JSON text (the client bounds its size)
-- Returns 1 stored, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_TOKENS, K_PROGRESS = KEYS[1], KEYS[2]
local id, token = ARGV[1], ARGV[2]
check_types(K_TOKENS, 'hash', K_PROGRESS, 'hash')

if redis.call('HGET', K_TOKENS, id) ~= token then
  return 0
end
for _, other in ipairs(redis.call('HRANDFIELD', K_PROGRESS, 3)) do
  if other ~= id and redis.call('HEXISTS', K_TOKENS, other) == 0 then
    redis.call('HDEL', K_PROGRESS, other)
  end
end
redis.call('HSET', K_PROGRESS, id, ARGV[3])
return 1
