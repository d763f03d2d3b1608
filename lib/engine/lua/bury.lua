-- bury: moves leased messages straight to the dead letters with a reason, each only while
-- the given token is still its lease (a body Redis could read but the client cannot).
--
-- KEYS[1] leased    ZSET  id -> lease deadline (ms)
-- KEYS[2] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[3] tokens    HASH  id -> token of the current lease
-- KEYS[4] dead      ZSET  id -> time of death (ms)
-- KEYS[5] deadInfo  HASH  id -> JSON { r: reason, e: error, a: attempt, t: time }
-- KEYS[6] messages  HASH  id -> stored body (of dead letters that the bound deletes)
-- KEYS[7] priority  HASH  id -> priority level 1-9 (kept for a requeue, deleted by the bound)
-- KEYS[8] deferrals HASH  id -> deferrals so far (they start over)
-- KEYS[9]  groupQueue    ZSET   grouped messages waiting (prelude-flow.lua has the formats)
-- KEYS[10] groupWaiting  HASH   id -> groupQueue member
-- KEYS[11] groupActive   HASH   id -> group, started until ended
-- KEYS[12] groupSlots    HASH   group -> started messages not ended
-- KEYS[13] groupTurns    ZSET   group -> turn
-- KEYS[14] groupHeld     ZSET   group -> ms its rate limit holds it until
-- KEYS[15] groupSequence STRING counter of group order and turns
-- KEYS[16] limits        HASH   fleet-wide limits
-- KEYS[17] rateWindows   HASH   rate window per topic/group
-- KEYS[18] held          STRING present while rateLimited holds the topic
-- KEYS[19] wake          LIST   wake-up token (for the flow helpers)
-- ARGV[1] reason        e.g. 'malformed'
-- ARGV[2] error         text kept with each dead letter
-- ARGV[3] deadMaxCount  dead letters kept at most (the oldest go first)
-- ARGV[4] deadMaxAgeMs  dead letters older than this are deleted
-- ARGV[5..] pairs: id, token
-- Returns one integer per pair: 1 buried, 0 stale token
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LEASED, K_ATTEMPTS, K_TOKENS, K_DEAD, K_DEAD_INFO, K_MESSAGES = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local K_PRIORITY, K_DEFERRALS = KEYS[7], KEYS[8]
use_flow_keys(9)
check_types(K_LEASED, 'zset', K_ATTEMPTS, 'hash', K_TOKENS, 'hash', K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_MESSAGES, 'hash',
  K_PRIORITY, 'hash', K_DEFERRALS, 'hash')

local now = now_ms()
local _, results = held_leases(K_TOKENS, 5)
for k, flag in ipairs(results) do
  if flag == 1 then
    -- Pair k is ARGV[3 + 2k], ARGV[4 + 2k]; the token says which delivery this was.
    local id = ARGV[3 + 2 * k]
    -- A token without the attempt is a lease made by an older version, which counted it in attempts.
    local attempt = token_attempt(ARGV[4 + 2 * k]) or tonumber(redis.call('HGET', K_ATTEMPTS, id)) or 0
    redis.call('ZREM', K_LEASED, id)
    redis.call('HDEL', K_TOKENS, id)
    redis.call('HDEL', K_ATTEMPTS, id)
    bury(K_DEAD, K_DEAD_INFO, K_MESSAGES, id, ARGV[1], ARGV[2], attempt, now, tonumber(ARGV[3]), tonumber(ARGV[4]),
      K_PRIORITY, K_DEFERRALS)
  end
end
return results
