-- get: reads one message whole, in one atomic read: where it is and everything stored about it.
-- The state is the structure that holds the id now (a delayed message already due, or an
-- expired lease, stays where it is until the next reserve moves it).
--
-- KEYS[1] delayed   ZSET  id -> due time (ms)
-- KEYS[2] leased    ZSET  id -> lease deadline (ms)
-- KEYS[3] messages  HASH  id -> stored body (of a completed message: its completed record)
-- KEYS[4] attempts  HASH  id -> deliveries whose lease ended unacked (a lease's own is in its token)
-- KEYS[5] tokens    HASH  id -> token of the current lease: <sequence>.<attempt>
-- KEYS[6] dead      ZSET  id -> time of death (ms)
-- KEYS[7] deadInfo  HASH  id -> JSON { r: reason, e: error, a: attempt, t: time }
-- KEYS[8] completed ZSET  id -> completion time (ms)
-- KEYS[9] progress  HASH  id -> JSON progress value of a leased message
-- KEYS[10] priority HASH  id -> priority level 1-9 (none: level 0)
-- ARGV[1] id
-- Returns false when no message has this id, else { state, body or false, score or false,
--         attempts or false, token or false, dead info or false, progress or false, priority or false }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local K_DELAYED, K_LEASED, K_MESSAGES, K_ATTEMPTS, K_TOKENS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_DEAD, K_DEAD_INFO, K_COMPLETED, K_PROGRESS, K_PRIORITY = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local id = ARGV[1]
check_types(K_DELAYED, 'zset', K_LEASED, 'zset', K_MESSAGES, 'hash', K_ATTEMPTS, 'hash', K_TOKENS, 'hash',
  K_DEAD, 'zset', K_DEAD_INFO, 'hash', K_COMPLETED, 'zset', K_PROGRESS, 'hash', K_PRIORITY, 'hash')

local body = redis.call('HGET', K_MESSAGES, id)
local state, score = nil, false
for _, place in ipairs({ 'completed', 'dead', 'leased', 'delayed' }) do
  local key = ({ completed = K_COMPLETED, dead = K_DEAD, leased = K_LEASED, delayed = K_DELAYED })[place]
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

local token = state == 'leased' and redis.call('HGET', K_TOKENS, id) or false
return {
  state,
  body or false,
  score or false,
  redis.call('HGET', K_ATTEMPTS, id) or false,
  token,
  state == 'dead' and redis.call('HGET', K_DEAD_INFO, id) or false,
  state == 'leased' and redis.call('HGET', K_PROGRESS, id) or false,
  redis.call('HGET', K_PRIORITY, id) or false,
}
