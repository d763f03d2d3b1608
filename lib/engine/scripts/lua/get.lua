-- get: reads one message whole, in one atomic read: where it is and everything stored about it.
-- The state is the structure that holds the id now (a delayed message already due, or an
-- expired lease, stays where it is until the next reserve moves it).
--
-- K.delayed K.leased K.messages K.attempts K.tokens K.dead K.deadInfo K.completed K.progress K.priority
-- K.steps K.flowParents K.flowChildren K.flowWaiting K.keyOf K.tags K.deadlines
-- ARGV[1] id
-- Returns false when no message has this id, else { state, body or false, score or false,
--         attempts or false, token or false, dead info or false, progress or false, priority or false,
--         { step name, result JSON, ... }, flow parent reference or false, its children's HASH as
--         field, value, ... (empty: none), its key mode and key or false, its tags joined by NUL or
--         false, its start-by deadline ('<ms>' or '<ms>:drop') or false }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id = ARGV[1]
check_types(K.delayed, 'zset', K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash', K.tokens, 'hash',
  K.dead, 'zset', K.deadInfo, 'hash', K.completed, 'zset', K.progress, 'hash', K.priority, 'hash', K.tags, 'hash')

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
  redis.call('HGET', K.tags, id) or false,
  redis.call('HGET', K.deadlines, id) or false,
}
