-- flow-sweep: what a process that died mid-way left of a flow in this slot: outbox entries
-- older than outboxAgeMs (a child ended, its parent may not have heard it) and nodes waiting
-- longer than uncommittedAgeMs for their flow's root (a pushFlow cut off). A node there that
-- has no parent link any more is gone (acked, cancelled, dropped by a release that did not
-- clean K.flowUncommitted): its entry is dropped here, else it would stay for good and, once
-- `limit` of them piled up, hide every newer node from the sweep.
--
-- K.flowOutbox K.flowOutboxDue K.flowUncommitted K.flowParents
-- ARGV[1] outboxAgeMs
-- ARGV[2] uncommittedAgeMs
-- ARGV[3] limit  entries of each kind at most
-- Returns { now, n, then n pairs (child id, outbox entry), then triples (id, parent reference,
--         time stored) of the nodes that still have their parent link }
local now = now_ms()
local limit = tonumber(ARGV[3])
local out = { now, 0 }
local ids = redis.call('ZRANGE', K.flowOutboxDue, '-inf', now - tonumber(ARGV[1]), 'BYSCORE', 'LIMIT', 0, limit)
for _, id in ipairs(ids) do
  local entry = redis.call('HGET', K.flowOutbox, id)
  if entry then
    out[#out + 1] = id
    out[#out + 1] = entry
  end
end
out[2] = (#out - 2) / 2
local held = redis.call('ZRANGE', K.flowUncommitted, '-inf', now - tonumber(ARGV[2]), 'BYSCORE', 'LIMIT', 0, limit,
  'WITHSCORES')
for i = 1, #held, 2 do
  local ref = redis.call('HGET', K.flowParents, held[i])
  if ref then
    out[#out + 1] = held[i]
    out[#out + 1] = ref
    out[#out + 1] = held[i + 1]
  else
    redis.call('ZREM', K.flowUncommitted, held[i])
  end
end
return out
