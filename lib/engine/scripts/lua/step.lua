-- step: stores the result of one durable step (context.step) of a leased message, only while
-- the given token is still its lease: a late delivery whose lease expired stores nothing. The
-- first result stored under a name stays: a second store of it (two calls of one delivery
-- racing, or a delivery that read its steps from a lagging replica) changes nothing and
-- answers the stored one, so both agree. A message holds at most maxSteps steps. The steps go
-- with the message (steps_forget in prelude.lua).
--
-- K.tokens K.steps K.stepIds
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] name      the step's name
-- ARGV[4] result    JSON text, '' for undefined (the client bounds its size)
-- ARGV[5] maxSteps  steps one message may hold
-- Returns { 1 } stored, { 0 } stale token (nothing stored), { 2, result } stored before (kept),
--         { 3 } the message holds maxSteps steps already (nothing stored)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id, token, name = ARGV[1], ARGV[2], ARGV[3]
local key = K.steps .. id
check_types(K.tokens, 'hash', K.stepIds, 'set', key, 'hash')

if redis.call('HGET', K.tokens, id) ~= token then
  return { 0 }
end
local stored = redis.call('HGET', key, name)
if stored then
  return { 2, stored }
end
if redis.call('HLEN', key) >= tonumber(ARGV[5]) then
  return { 3 }
end
redis.call('HSET', key, name, ARGV[4])
redis.call('SADD', K.stepIds, id)
return { 1 }
