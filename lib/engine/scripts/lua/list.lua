-- list: pages through the messages of one state in the order they will be served: ready
-- by priority level (9 first), head first within a level, delayed by due time, leased by deadline,
-- dead oldest first, completed newest first.
--
-- K.ready K.delayed K.leased K.dead K.completed K.readyLevels K.flowWaiting
-- ARGV[1] state   'ready', 'delayed', 'leased', 'dead', 'completed' or 'waiting-children' (a flow's
--                 node held in delayed at FLOW_HELD is not listed as delayed)
-- ARGV[2] offset  entries to skip (>= 0)
-- ARGV[3] limit   entries to return (>= 1)
-- ARGV[4] preview bytes of payload (of a completed message: of result) per row; absent or 0: whole bodies
-- Returns the rows as prelude-preview.lua's listed_rows gives them (6 per message, 9 with a preview)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.dead, 'zset', K.messages, 'hash',
  K.attempts, 'hash', K.tokens, 'hash', K.deadInfo, 'hash', K.completed, 'zset', K.readyLevels, 'zset',
  K.tags, 'hash')

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
  elseif state == 'dead' then
    scored = redis.call('ZRANGE', K.dead, first, last, 'WITHSCORES')
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

return listed_rows(state, ids, scores, preview)
