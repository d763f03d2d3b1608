-- How a lease or a life ends for good (ack, death), after prelude-flow.lua, prelude-tree.lua and
-- prelude-keys.lua: an ended message of a script that takes the group keys (K.groupActive set)
-- frees its group slot, one of a flow tells its parent through the outbox, a keyed one leaves
-- its key (K.keyOf set). Locals only.

-- Moves a message to the dead letters with a reason; its body stays for inspection.
-- The dead letters are bounded: the oldest beyond max_count, or older than max_age ms,
-- are deleted for good (at most 100 per call, so one call stays short).
-- A dead letter keeps its priority (a requeue restores it); its deferrals start over. Its info
-- records the maxAttempts that applied to its deliveries (`m`; nil leaves it out), which its
-- body holds only when the message carried its own.
local function bury(id, reason, message, attempt, max_attempts, now, max_count, max_age)
  redis.call('HDEL', K.deferrals, id)
  redis.call('ZADD', K.dead, now, id)
  redis.call('HSET', K.deadInfo, id, cjson.encode({ r = reason, e = message, a = attempt, m = max_attempts, t = now }))
  if K.groupActive then
    leases_ended({ id })
  end
  if K.keyOf then
    keys_ended({ id })
  end
  local used = flow_used()
  if used then
    flow_child_ended(id, 'f', cjson.encode({ r = reason, e = message }))
  end
  local ids = oldest_beyond(K.dead, now, max_count, max_age)
  if #ids > 0 then
    redis.call('HDEL', K.messages, unpack(ids))
    redis.call('HDEL', K.deadInfo, unpack(ids))
    redis.call('HDEL', K.priority, unpack(ids))
    redis.call('ZREMRANGEBYRANK', K.dead, 0, #ids - 1)
    if used then
      flow_forget(ids)
    end
    steps_forget(ids)
  end
end

-- Acks the id/token pairs of ARGV from index `first`: removes each message whose lease is
-- still the given one, with a few commands per batch, not per message, and counts them in
-- K.counters. Returns one flag per pair: 1 acked, 0 stale token, 2 already gone (no body, no
-- lease: acked before, by this token if its lease was still live, e.g. a resent call).
local function ack_leases(first)
  local held, results = held_leases(first)
  for i = first, #ARGV, 2 do
    local k = (i - first) / 2 + 1
    if results[k] == 0 and redis.call('HEXISTS', K.tokens, ARGV[i]) == 0 and redis.call('HEXISTS', K.messages, ARGV[i]) == 0 then
      results[k] = 2
      -- Maybe a superseded message's consumer, saying its handler returned.
      if K.keyOf then
        key_drained(ARGV[i])
      end
    end
  end
  if #held > 0 then
    redis.call('ZREM', K.leased, unpack(held))
    redis.call('HDEL', K.messages, unpack(held))
    redis.call('HDEL', K.attempts, unpack(held))
    redis.call('HDEL', K.tokens, unpack(held))
    -- One read for all four: a plain topic has none (a retry's due time is dropped when it
    -- is leased; one is left only by a process of an older version leasing it).
    if redis.call('EXISTS', K.priority, K.deferrals, K.retryDue, K.keyOf or K.priority) > 0 then
      redis.call('HDEL', K.priority, unpack(held))
      redis.call('HDEL', K.deferrals, unpack(held))
      redis.call('HDEL', K.retryDue, unpack(held))
      if K.keyOf then
        keys_ended(held)
      end
    end
    steps_forget(held)
    if K.groupActive then
      leases_ended(held)
    end
    -- An ack by hand or along with a reserve carries no result (a consumer's goes through complete.lua).
    if flow_used() then
      for _, id in ipairs(held) do
        flow_child_ended(id, 'a', '')
      end
      flow_forget(held)
    end
    redis.call('HINCRBY', K.counters, 'acked', #held)
  end
  return results
end
