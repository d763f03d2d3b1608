-- get: reads one message whole, in one atomic read: where it is and everything stored about it.
-- The state is the structure that holds the id now (a delayed message already due, or an
-- expired lease, stays where it is until the next reserve moves it).
--
-- K.delayed   ZSET   id -> due time (ms)
-- K.leased    ZSET   id -> lease deadline (ms)
-- K.messages  HASH   id -> stored body (of a completed message: its completed record)
-- K.attempts  HASH   id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- K.tokens    HASH   id -> token of the current lease: <sequence>.<attempt>
-- K.dead      ZSET   id -> time of death (ms)
-- K.deadInfo  HASH   id -> JSON { r: reason, e: error, a: attempt, m: maxAttempts, t: time }
-- K.completed ZSET   id -> completion time (ms)
-- K.progress  HASH   id -> JSON progress value of a leased message
-- K.priority  HASH   id -> priority level 1-9 (none: level 0)
-- K.steps     PREFIX of each message's HASH of durable steps, `<steps><id>`, not a key
-- K.flowParents HASH   child id -> its parent, the flow's root, its own delay (JSON)
-- K.flowChildren PREFIX of each parent's HASH of children (see queue-keys.ts), not a key
-- K.flowWaiting ZSET   parent id -> since when it waits for its children
-- K.keyOf     HASH   id -> mode and key, of a live keyed message
-- ARGV[1] id
-- Returns false when no message has this id, else { state, body or false, score or false,
--         attempts or false, token or false, dead info or false, progress or false, priority or false,
--         { step name, result JSON, ... }, flow parent reference or false, its children's HASH as
--         field, value, ... (empty: none), its key mode and key or false }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id = ARGV[1]
check_types(K.delayed, 'zset', K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash', K.tokens, 'hash',
  K.dead, 'zset', K.deadInfo, 'hash', K.completed, 'zset', K.progress, 'hash', K.priority, 'hash')

local body = redis.call('HGET', K.messages, id)
local state, score = nil, false
for _, place in ipairs({ 'completed', 'dead', 'leased', 'delayed' }) do
  local key = ({ completed = K.completed, dead = K.dead, leased = K.leased, delayed = K.delayed })[place]
  score = redis.call('ZSCORE', key, id)
  if score then
    state = place
    break
  end
end
if not state then
  if not body then
    return false
  end
  state = 'ready'
end

if state == 'delayed' and redis.call('ZSCORE', K.flowWaiting, id) then
  state, score = 'waiting-children', false
end
local token = state == 'leased' and redis.call('HGET', K.tokens, id) or false
local key = K.steps .. id
check_types(key, 'hash')
local steps = redis.call('HGETALL', key)
key = K.flowChildren .. id
return {
  state,
  body or false,
  score or false,
  redis.call('HGET', K.attempts, id) or false,
  token,
  state == 'dead' and redis.call('HGET', K.deadInfo, id) or false,
  state == 'leased' and redis.call('HGET', K.progress, id) or false,
  redis.call('HGET', K.priority, id) or false,
  steps,
  redis.call('HGET', K.flowParents, id) or false,
  redis.call('HGETALL', key),
  redis.call('HGET', K.keyOf, id) or false,
}
