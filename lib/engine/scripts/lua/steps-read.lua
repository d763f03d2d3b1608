-- steps-read: reads the durable steps (context.step) a message stored so far, as a delivery
-- starts its first step, while the given token is still its lease: a delivery whose lease is
-- already gone learns it before its first step runs. The store (step.lua) is fenced again, and
-- keeps the first result of a name.
--
-- K.tokens K.steps
-- ARGV[1] id
-- ARGV[2] token
-- Returns false for a stale token, else { name, result, ... } (empty when it has none)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id = ARGV[1]
local key = K.steps .. id
check_types(K.tokens, 'hash', key, 'hash')

if redis.call('HGET', K.tokens, id) ~= ARGV[2] then
  return false
end
return redis.call('HGETALL', key)
