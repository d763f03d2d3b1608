-- ack: removes messages for good, each only while the given token is still its
-- current lease. A stale token (the lease expired and the message moved on) changes nothing.
--
-- KEYS[1] leased    ZSET  id -> lease deadline (ms)
-- KEYS[2] messages  HASH  id -> stored body
-- KEYS[3] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[4] tokens    HASH  id -> token of the current lease
-- KEYS[5] priority  HASH  id -> priority level 1-9
-- KEYS[6] deferrals HASH  id -> deferrals so far
-- KEYS[7]  groupQueue    ZSET   grouped messages waiting (prelude-flow.lua has the formats)
-- KEYS[8]  groupWaiting  HASH   id -> groupQueue member
-- KEYS[9]  groupActive   HASH   id -> group, started until ended
-- KEYS[10] groupSlots    HASH   group -> started messages not ended
-- KEYS[11] groupTurns    ZSET   group -> turn
-- KEYS[12] groupHeld     ZSET   group -> ms its rate limit holds it until
-- KEYS[13] groupSequence STRING counter of group order and turns
-- KEYS[14] limits        HASH   fleet-wide limits
-- KEYS[15] rateWindows   HASH   rate window per topic/group
-- KEYS[16] held          STRING present while rateLimited holds the topic
-- KEYS[17] wake          LIST   wake-up token (for the flow helpers)
-- KEYS[18] counters      HASH   acked -> messages acked so far
-- ARGV    pairs: id, token
-- Returns one integer per pair: 1 acked, 0 stale token, 2 already gone (no body, no lease:
--         acked before, by this token if its lease was still live, e.g. a resent call); then 1
--         if a freed group or concurrency slot woke consumers (the caller wakes a partitioned
--         topic's home), else 0
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LEASED, K_MESSAGES, K_ATTEMPTS, K_TOKENS, K_PRIORITY, K_DEFERRALS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local K_COUNTERS = KEYS[18]
use_flow_keys(7)
check_types(K_LEASED, 'zset', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash', K_TOKENS, 'hash', K_PRIORITY, 'hash',
  K_DEFERRALS, 'hash', K_COUNTERS, 'hash')

local results = ack_leases(K_LEASED, K_MESSAGES, K_ATTEMPTS, K_TOKENS, K_PRIORITY, K_DEFERRALS, K_COUNTERS, 1)
results[#results + 1] = flow_woke and 1 or 0
return results
