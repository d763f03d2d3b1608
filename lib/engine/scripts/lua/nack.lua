-- nack: ends a lease after a failed delivery. With attempts left the message waits in
-- delayed until now + delayMs (or goes straight to its level's ready when delayMs is 0); after the
-- last attempt it goes to dead with the error. A stale token changes nothing. A retry keeps its
-- start-by deadline: it waits in K.expiring again, for reserve's sweep.
--
-- K.leased K.delayed K.ready K.attempts K.tokens K.dead K.deadInfo K.wake K.messages K.priority K.deferrals
-- K.readyLevels K.retryDue K.stepIds K.deadlines K.expiring
-- ARGV[1] id
-- ARGV[2] token
-- ARGV[3] delayMs      wait before the next attempt (>= 0)
-- ARGV[4] maxAttempts  deliveries allowed in all
-- ARGV[5] error        error text to keep with a dead letter
-- ARGV[6] deadMaxCount dead letters kept at most (the oldest go first)
-- ARGV[7] deadMaxAgeMs dead letters older than this are deleted
-- Returns 1 retry, 0 stale token, or { 2 dead, the outbox entries written (child id, entry: a
--         flow's child dead, for the caller to pass on) }
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local id, token, delay_ms, max_attempts = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
check_types(K.leased, 'zset', K.delayed, 'zset', K.ready, 'list', K.attempts, 'hash',
  K.tokens, 'hash', K.dead, 'zset', K.deadInfo, 'hash', K.wake, 'list', K.messages, 'hash',
  K.priority, 'hash', K.deferrals, 'hash', K.readyLevels, 'zset', K.retryDue, 'hash')
check_types(K.stepIds, 'set')

if redis.call('HGET', K.tokens, id) ~= token then
  -- Maybe a superseded message's consumer, its handler ended (a heartbeat heard of the lost lease
  -- before the cancel notice came): its key's next message need not wait for the lease's deadline.
  key_drained(id)
  return 0
end
-- Read before any write: a retry keeps its start-by deadline (a foreign key fails the call here).
local deadline = redis.call('HGET', K.deadlines, id)
if deadline then
  check_types(K.expiring, 'zset')
end
redis.call('ZREM', K.leased, id)
redis.call('HDEL', K.tokens, id)

local now = now_ms()
-- A token without the attempt is a lease made by an older version, which counted it in attempts.
local attempt = token_attempt(token) or tonumber(redis.call('HGET', K.attempts, id)) or 0
if attempt >= max_attempts then
  message_dead(id, 'failed', ARGV[5], attempt, max_attempts, now, tonumber(ARGV[6]), tonumber(ARGV[7]))
  return { 2, flow_ended }
end

-- The lease's attempt now counts for the next delivery; the message keeps its group's slot
-- through its retries, but no longer holds a globalConcurrency slot.
redis.call('HSET', K.attempts, id, attempt)
concurrency_freed()
-- The delivery's handler time counts in its group's quota (a dead one's, in message_dead).
runs_ended_if_any({ id }, now)
-- When the retry is due: the next delivery's wait (waitMs) counts from there.
redis.call('HSET', K.retryDue, id, now + delay_ms)
if deadline then
  redis.call('ZADD', K.expiring, string.match(deadline, '^%d+'), id)
end
if delay_ms > 0 then
  local first = redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
  local due = now + delay_ms
  redis.call('ZADD', K.delayed, due, id)
  if first[2] == nil or due < tonumber(first[2]) then
    wake()
  end
else
  make_ready('RPUSH', { id })
  wake()
end
return 1
