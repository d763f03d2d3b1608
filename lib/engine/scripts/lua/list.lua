-- list: pages through the messages of one state in the order they will be served: ready
-- by priority level (9 first), head first within a level, delayed by due time, leased by deadline, completed newest first.
--
-- K.ready K.delayed K.leased K.messages K.attempts K.tokens K.completed K.readyLevels K.flowWaiting K.keyOf
-- K.deadlines
-- ARGV[1] state   'ready', 'delayed', 'leased', 'completed' or 'waiting-children' (a flow's
--                 node held in delayed at FLOW_HELD is not listed as delayed)
-- ARGV[2] offset  entries to skip (>= 0)
-- ARGV[3] limit   entries to return (>= 1)
-- ARGV[4] preview bytes of payload (of a completed message: of result) per row; absent or 0: whole bodies
-- Returns { id, score or false, body or false, attempts or token or false, key mode and key or
--         false, ... } (5 per message; the fourth is the token for leased messages, the attempts
--         count otherwise); with a preview, 8 per message: the body without its payload (or
--         result), then the preview text or false, 1 when it was cut (else 0), the payload's
--         (result's) size in bytes; then, when the topic (partition) has start-by deadlines, one
--         array last: each row's deadline ('<ms>' or '<ms>:drop') or false, in row order
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash',
  K.tokens, 'hash', K.completed, 'zset', K.readyLevels, 'zset')

local state, first, preview = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[4]) or 0
local last = first + tonumber(ARGV[3]) - 1
local ids, scores = {}, {}
if state == 'ready' then
  ids = ready_in_order(first, last - first + 1)
else
  local scored
  if state == 'delayed' then
    scored = delayed_page(first, last)
  elseif state == 'waiting-children' then
    scored = redis.call('ZRANGE', K.flowWaiting, first, last, 'WITHSCORES')
  elseif state == 'leased' then
    scored = redis.call('ZRANGE', K.leased, first, last, 'WITHSCORES')
  else
    scored = redis.call('ZRANGE', K.completed, first, last, 'REV', 'WITHSCORES')
  end
  for i = 1, #scored, 2 do
    if scored[i] ~= ENCODING_ANCHOR then
      ids[#ids + 1] = scored[i]
      scores[#ids] = scored[i + 1]
    end
  end
end

local out = {}
if #ids == 0 then
  return out
end
local bodies = redis.call('HMGET', K.messages, unpack(ids))
local key = state == 'leased' and K.tokens or K.attempts
local extra = redis.call('HMGET', key, unpack(ids))
local keyed = redis.call('HMGET', K.keyOf, unpack(ids))
for i, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = scores[i] or false
  out[#out + 1] = keyed[i] or false
  if preview > 0 then
    local body, text, cut, size = preview_row(bodies[i], preview)
    out[#out + 1] = body
    out[#out + 1] = extra[i] or false
    out[#out + 1] = text
    out[#out + 1] = cut
    out[#out + 1] = size
  else
    out[#out + 1] = bodies[i] or false
    out[#out + 1] = extra[i] or false
  end
end
-- One EXISTS for a topic without deadlines.
if redis.call('EXISTS', K.deadlines) == 1 then
  out[#out + 1] = redis.call('HMGET', K.deadlines, unpack(ids))
end
return out
