-- ack: removes messages for good, each only while the given token is still its
-- current lease. A stale token (the lease expired and the message moved on) changes nothing.
--
-- K.leased        ZSET   id -> lease deadline (ms)
-- K.messages      HASH   id -> stored body
-- K.attempts      HASH   id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- K.tokens        HASH   id -> token of the current lease
-- K.priority      HASH   id -> priority level 1-9
-- K.deferrals     HASH   id -> deferrals so far
-- K.groupQueue    ZSET   grouped messages an earlier version left waiting (drained only)
-- K.groupWaiting  HASH   id -> '<group>\0<sequence>\0<id>' of a delayed grouped message
-- K.groups        PREFIX of each group's ZSET of waiting ids (id -> sequence), not a key
-- K.groupCount    STRING grouped messages waiting in the groups' ZSETs
-- K.groupActive   HASH   id -> group, started until ended
-- K.groupSlots    HASH   group -> started messages not ended
-- K.groupTurns    ZSET   group -> turn
-- K.groupHeld     ZSET   group -> ms its rate limit holds it until
-- K.groupSequence STRING counter of group order and turns
-- K.limits        HASH   fleet-wide limits
-- K.rateLog       ZSET   starts in the current rate window of the topic and each group
-- K.rateLast      ZSET   topic ('') or group -> ms of its last start in rateLog
-- K.held          STRING present while rateLimited holds the topic
-- K.groupWeights  HASH   group -> weight (none: round robin)
-- K.groupPasses   ZSET   '' -> virtual clock, group -> its next weighted turn
-- K.wake          LIST   wake-up token for blocked consumers
-- K.counters      HASH   acked -> messages acked so far
-- K.retryDue      HASH   id -> when its next delivery became due (ms), until it is leased
-- K.flowParents   HASH   child id -> its parent, the flow's root, its own delay (JSON)
-- K.flowChildren  PREFIX of each parent's HASH of children (see queue-keys.ts), not a key
-- K.flowOpen      SET    parents whose children's HASH exists
-- K.flowWaiting   ZSET   parent id -> since when it waits for its children
-- K.flowOutbox    HASH   child id -> an end its parent has not heard yet
-- K.flowOutboxDue ZSET   child id -> when its outbox entry was written
-- K.flowSequence  STRING counter ordering the outbox entries of a child
-- K.flowUncommitted ZSET id -> time stored, of flow nodes whose root is not stored yet
-- K.steps         PREFIX of each message's HASH of durable steps, `<steps><id>`, not a key
--                 (deleted with the message; kept while it is dead)
-- K.stepIds       SET    ids of the messages that have steps
-- K.delayed       ZSET   id -> due time (ms): a keyed message waiting for one that ended becomes due
-- K.keys          HASH   each key's state (prelude-keys.lua)
-- K.keyOf         HASH   id -> mode and key, of a live keyed message
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
results[#results + 1] = flow_woke and 1 or 0
results[#results + 1] = flow_ended
return results
