-- steps-read: reads the durable steps (context.step) a message stored so far, as a delivery
-- starts its first step. Not fenced by a lease: step.lua is, and keeps the first result of a name.
--
-- K.steps    PREFIX of each message's HASH `<steps><id>` (step name -> result JSON, '' for
--            undefined), not a key: derived here in the partition's hash tag
-- ARGV[1] id
-- Returns { name, result, ... } (empty when it has none)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local key = K.steps .. ARGV[1]
check_types(key, 'hash')

return redis.call('HGETALL', key)
