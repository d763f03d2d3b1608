-- ack: removes messages for good, each only while the given token is still its
-- current lease. A stale token (the lease expired and the message moved on) changes nothing.
--
-- KEYS[1] leased    ZSET  id -> lease deadline (ms)
-- KEYS[2] messages  HASH  id -> stored body
-- KEYS[3] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[4] tokens    HASH  id -> token of the current lease
-- KEYS[5] priority  HASH  id -> priority level 1-9
-- KEYS[6] deferrals HASH  id -> deferrals so far
-- ARGV    pairs: id, token
-- Returns one integer per pair: 1 acked, 0 stale token, 2 already gone (no body, no lease:
--         acked before, by this token if its lease was still live, e.g. a resent call)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_LEASED, K_MESSAGES, K_ATTEMPTS, K_TOKENS, K_PRIORITY, K_DEFERRALS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
check_types(K_LEASED, 'zset', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash', K_TOKENS, 'hash', K_PRIORITY, 'hash',
  K_DEFERRALS, 'hash')

return ack_leases(K_LEASED, K_MESSAGES, K_ATTEMPTS, K_TOKENS, K_PRIORITY, K_DEFERRALS, 1)
