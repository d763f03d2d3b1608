-- bury: moves leased messages straight to the dead letters with a reason, each only while
-- the given token is still its lease (a body Redis could read but the client cannot).
--
-- K.leased        ZSET   id -> lease deadline (ms)
-- K.attempts      HASH   id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- K.tokens        HASH   id -> token of the current lease
-- K.dead          ZSET   id -> time of death (ms)
-- K.deadInfo      HASH   id -> JSON { r: reason, e: error, a: attempt, m: maxAttempts, t: time }
-- K.messages      HASH   id -> stored body (of dead letters that the bound deletes)
-- K.priority      HASH   id -> priority level 1-9 (kept for a requeue, deleted by the bound)
-- K.deferrals     HASH   id -> deferrals so far (they start over)
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
    redis.call('HDEL', K.tokens, id)
    redis.call('HDEL', K.attempts, id)
    bury(id, ARGV[1], ARGV[2], attempt, max_attempts, now, tonumber(ARGV[3]), tonumber(ARGV[4]))
  end
end
results[#results + 1] = flow_ended
return results
