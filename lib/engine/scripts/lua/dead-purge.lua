-- dead-purge: deletes dead letters for good: the given ids, or else the oldest `limit`.
--
-- K.dead     ZSET   id -> time of death (ms)
-- K.deadInfo HASH   id -> JSON reason
-- K.messages HASH   id -> stored body
-- K.attempts HASH   id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- K.priority HASH   id -> priority level 1-9
-- K.flowParents HASH   child id -> its parent, the flow's root, its own delay (JSON)
-- K.flowChildren PREFIX of each parent's HASH of children (see queue-keys.ts), not a key
-- K.flowOpen SET    parents whose children's HASH exists
-- K.flowWaiting ZSET   parent id -> since when it waits for its children
-- K.flowOutbox HASH   child id -> an end its parent has not heard yet
-- K.flowOutboxDue ZSET   child id -> when its outbox entry was written
-- K.flowSequence STRING counter ordering the outbox entries of a child
-- K.flowUncommitted ZSET id -> time stored, of flow nodes whose root is not stored yet
-- K.steps    PREFIX of each message's HASH of durable steps, `<steps><id>`, not a key
-- K.stepIds  SET    ids of the messages that have steps
-- ARGV[1] limit  how many of the oldest to take when no ids follow
-- ARGV[2..] ids (optional)
-- Returns { ids taken, dead letters deleted }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.dead, 'zset', K.deadInfo, 'hash', K.messages, 'hash', K.attempts, 'hash', K.priority, 'hash')
check_types(K.stepIds, 'set')

local ids = { unpack(ARGV, 2) }
if #ids == 0 then
  ids = redis.call('ZRANGE', K.dead, 0, tonumber(ARGV[1]) - 1)
end
local purged = {}
for _, id in ipairs(ids) do
  if redis.call('ZREM', K.dead, id) == 1 then
    redis.call('HDEL', K.deadInfo, id)
    redis.call('HDEL', K.messages, id)
    redis.call('HDEL', K.attempts, id)
    redis.call('HDEL', K.priority, id)
    purged[#purged + 1] = id
  end
end
steps_forget(purged)
if flow_used() then
  flow_forget(purged)
end
return { #ids, #purged }
