-- list-rows: the rows of given messages of one state, as list shows them: what a filtered list
-- reads once it knows which ids its page holds (filter-page.lua). An id no longer in the state
-- (acked, retried, moved since) is left out.
--
-- K.delayed K.leased K.dead K.completed K.flowWaiting
-- ARGV[1] state   'ready', 'delayed', 'leased', 'dead', 'completed' or 'waiting-children'
-- ARGV[2] preview bytes of payload (of a completed message: of result) per row; 0: whole bodies
-- ARGV[3..] ids
-- Returns the rows as prelude-preview.lua's listed_rows gives them (6 per message, 9 with a preview)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.delayed, 'zset', K.leased, 'zset', K.dead, 'zset', K.completed, 'zset', K.flowWaiting, 'zset',
  K.messages, 'hash', K.attempts, 'hash', K.tokens, 'hash', K.deadInfo, 'hash', K.tags, 'hash')

local state, preview = ARGV[1], tonumber(ARGV[2])
local given = {}
for i = 3, #ARGV do
  given[#given + 1] = ARGV[i]
end
if #given == 0 then
  return {}
end
local ids, scores = {}, {}
if state == 'ready' then
  -- Ready: a stored message in none of the other structures, as get says.
  local bodies = redis.call('HMGET', K.messages, unpack(given))
  local elsewhere = {}
  for _, key in ipairs({ K.delayed, K.leased, K.dead, K.completed }) do
    for i, score in ipairs(redis.call('ZMSCORE', key, unpack(given))) do
      elsewhere[i] = elsewhere[i] or score
    end
  end
  for i, id in ipairs(given) do
    if bodies[i] and not elsewhere[i] then
      ids[#ids + 1] = id
    end
  end
else
  local key = ({ delayed = K.delayed, leased = K.leased, dead = K.dead, completed = K.completed,
    ['waiting-children'] = K.flowWaiting })[state]
  local held = tonumber(FLOW_HELD)
  for i, score in ipairs(redis.call('ZMSCORE', key, unpack(given))) do
    if score and not (state == 'delayed' and tonumber(score) == held) then
      ids[#ids + 1] = given[i]
      scores[#ids] = score
    end
  end
end
return listed_rows(state, ids, scores, preview)
