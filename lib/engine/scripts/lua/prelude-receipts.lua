-- Relay receipts (K.relayReceipts, ZSET receipt -> ms recorded): the outbox relay's proof that a
-- row was pushed. push.lua and push-keyed.lua record a row's receipt in the call that pushes it,
-- and refuse, changing nothing, a push whose receipt is there already: a relay that died after
-- its push and before its database commit pushes nothing twice. The relay forgets them after
-- its commit (receipts-forget.lua). Locals only; it needs no other prelude.

-- How long a receipt is kept at most (7 days): one a relay leaked (it died between its commit
-- and its forget) is pruned by a later call that carries receipts.
local RECEIPT_MAX_AGE_MS = 7 * 24 * 3600 * 1000

-- The receipts ARGV[first .. first + count - 1] (one per message, '' for none), checked before
-- any write. Returns the receipts to record (in message order) and the set of the messages
-- relayed before: their receipt is held, or a message before it in this call has it.
local function receipts_relayed(first, count)
  check_types(K.relayReceipts, 'zset')
  local fresh, relayed, seen = {}, {}, {}
  for m = 1, count do
    local receipt = ARGV[first + m - 1]
    if receipt ~= '' then
      if seen[receipt] or redis.call('ZSCORE', K.relayReceipts, receipt) then
        relayed[m] = true
      else
        fresh[#fresh + 1] = receipt
      end
      seen[receipt] = true
    end
  end
  return fresh, relayed
end

-- Records the receipts of the messages pushed (their effect is decided: stored, duplicate,
-- debounced...) at `now`, and prunes at most 100 receipts older than RECEIPT_MAX_AGE_MS.
local function receipts_record(fresh, now)
  local old = redis.call('ZRANGE', K.relayReceipts, '-inf', string.format('%d', now - RECEIPT_MAX_AGE_MS), 'BYSCORE',
    'LIMIT', 0, 100)
  if #old > 0 then
    redis.call('ZREM', K.relayReceipts, unpack(old))
  end
  local pairs_ = {}
  local score = string.format('%d', now)
  for _, receipt in ipairs(fresh) do
    pairs_[#pairs_ + 1] = score
    pairs_[#pairs_ + 1] = receipt
  end
  push_ids('ZADD', K.relayReceipts, pairs_)
end
