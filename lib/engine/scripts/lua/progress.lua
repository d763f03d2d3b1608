-- progress: stores a leased message's progress value, only while the given token is still its
-- lease. A few other entries picked at random are deleted when their message holds no lease
-- any more (acked, retried or cancelled by a path that does not know of progress), so the hash
-- stays about as large as the set of leases that report progress.
--
-- K.tokens K.progress
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] value  JSON text (the client bounds its size)
-- Returns 1 stored, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id, token = ARGV[1], ARGV[2]
check_types(K.tokens, 'hash', K.progress, 'hash')

if redis.call('HGET', K.tokens, id) ~= token then
  return 0
end
for _, other in ipairs(redis.call('HRANDFIELD', K.progress, 3)) do
  if other ~= id and redis.call('HEXISTS', K.tokens, other) == 0 then
    redis.call('HDEL', K.progress, other)
  end
end
redis.call('HSET', K.progress, id, ARGV[3])
return 1
