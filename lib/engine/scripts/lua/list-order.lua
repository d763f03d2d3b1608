-- list-order: how many messages one state holds, and the sort keys of the first `count` in
-- serving order, never a body: what a page merged over partitions needs to know which rows of
-- each partition it takes (list.lua then reads only those).
-- Ready ones are keyed by push time, read from the start of each stored body (server-side only).
--
-- K.ready K.delayed K.leased K.messages K.completed K.dead K.readyLevels K.flowWaiting
-- ARGV[1] state   'ready', 'delayed', 'leased', 'completed', 'dead' or 'waiting-children'
-- ARGV[2] count   sort keys to return (>= 0; 0: only the size)
-- Returns { size, key, key, ... }: keys in serving order (ready: push time, 0 when unreadable;
--         delayed: due time; leased: deadline; completed: completion time, newest first; dead:
--         time of death)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.messages, 'hash', K.completed, 'zset',
  K.dead, 'zset', K.readyLevels, 'zset')

local state, count = ARGV[1], tonumber(ARGV[2])
local out = { 0 }
if state == 'ready' then
  for _, level in ipairs(levels_in_order()) do
    local key = level_key(tonumber(level))
    out[1] = out[1] + redis.call('LLEN', key)
  end
  for _, id in ipairs(count > 0 and ready_in_order(0, count) or {}) do
    local body = redis.call('HGET', K.messages, id) or ''
    out[#out + 1] = enqueued_at(body) or 0
  end
  return out
end

local key = ({ delayed = K.delayed, leased = K.leased, completed = K.completed, dead = K.dead,
  ['waiting-children'] = K.flowWaiting })[state]
out[1] = state == 'leased' and lease_count() or redis.call('ZCARD', key)
if state == 'delayed' then
  out[1] = out[1] - redis.call('ZCOUNT', key, FLOW_HELD, FLOW_HELD)
end
if count > 0 then
  local scored
  if state == 'completed' then
    scored = redis.call('ZRANGE', key, 0, count - 1, 'REV', 'WITHSCORES')
  elseif state == 'delayed' then
    scored = delayed_page(0, count - 1)
  else
    scored = redis.call('ZRANGE', key, 0, count - 1, 'WITHSCORES')
  end
  for i = 2, #scored, 2 do
    if scored[i - 1] ~= ENCODING_ANCHOR then
      out[#out + 1] = scored[i]
    end
  end
end
return out
