-- scaling-set: sets (or removes) a topic's scaling target, kept in its home slot's K.scaling
-- beside the signal's state. A new target keeps the arrival samples and the signal's state (the
-- next read clamps it into the new bounds); removing it deletes both.
--
-- K.scaling
-- ARGV[1..5] targetWaitMs minConsumers maxConsumers concurrency cooldownMs (none: remove)
-- Returns 1
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.scaling, 'hash')

if #ARGV == 0 then
  redis.call('DEL', K.scaling)
  return 1
end
redis.call('HSET', K.scaling, 'tw', ARGV[1], 'mn', ARGV[2], 'mx', ARGV[3], 'cc', ARGV[4], 'cd', ARGV[5])
return 1
