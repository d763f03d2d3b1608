-- bury: moves leased messages straight to the dead letters with a reason, each only while
-- the given token is still its lease (a body Redis could read but the client cannot).
--
-- K.leased K.attempts K.tokens K.dead K.deadInfo K.messages K.priority K.deferrals K.stepIds
-- ARGV[1] reason        e.g. 'malformed'
-- ARGV[2] error         text kept with each dead letter
-- ARGV[3] deadMaxCount  dead letters kept at most (the oldest go first)
-- ARGV[4] deadMaxAgeMs  dead letters older than this are deleted
-- ARGV[5] maxAttempts   deliveries that were allowed, recorded with each dead letter ('': none recorded)
-- ARGV[6..] pairs: id, token
-- Returns one integer per pair: 1 buried, 0 stale token; then the outbox entries written (child
--         id, entry, ...: a flow's children dead, for the caller to pass on)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.leased, 'zset', K.attempts, 'hash', K.tokens, 'hash', K.dead, 'zset', K.deadInfo, 'hash', K.messages, 'hash',
  K.priority, 'hash', K.deferrals, 'hash')
check_types(K.stepIds, 'set')

local now = now_ms()
local max_attempts = tonumber(ARGV[5])
local _, results = held_leases(6)
for k, flag in ipairs(results) do
  if flag == 0 then
    -- Maybe a superseded message's consumer, its handler ended (see nack.lua).
    key_drained(ARGV[4 + 2 * k])
  elseif flag == 1 then
    -- Pair k is ARGV[4 + 2k], ARGV[5 + 2k]; the token says which delivery this was.
    local id = ARGV[4 + 2 * k]
    -- A token without the attempt is a lease made by an older version, which counted it in attempts.
    local attempt = token_attempt(ARGV[5 + 2 * k]) or tonumber(redis.call('HGET', K.attempts, id)) or 0
    redis.call('ZREM', K.leased, id)
    message_dead(id, ARGV[1], ARGV[2], attempt, max_attempts, now, tonumber(ARGV[3]), tonumber(ARGV[4]))
  end
end
results[#results + 1] = flow_ended
return results
