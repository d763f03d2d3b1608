-- ack: removes messages for good, each only while the given token is still its
-- current lease. A stale token (the lease expired and the message moved on) changes nothing.
--
-- K.leased K.messages K.attempts K.tokens K.priority K.deferrals K.counters K.stepIds
-- ARGV    pairs: id, token
-- Returns one integer per pair: 1 acked, 0 stale token, 2 already gone (no body, no lease:
--         acked before, by this token if its lease was still live, e.g. a resent call); then 1
--         if a freed group or concurrency slot woke consumers (the caller wakes a partitioned
--         topic's home), else 0; then the outbox entries written (child id, entry, ...: a flow's
--         children acked, for the caller to pass on)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash', K.tokens, 'hash', K.priority, 'hash',
  K.deferrals, 'hash', K.counters, 'hash')
check_types(K.stepIds, 'set')

local results = ack_leases(1)
results[#results + 1] = freed_woke and 1 or 0
results[#results + 1] = flow_ended
return results
