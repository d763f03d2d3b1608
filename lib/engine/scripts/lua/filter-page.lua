-- filter-page: one batch of a filtered walk over the messages of one state (see prelude-filter.lua):
-- what list and count read, a bounded batch per call, the caller calling again from the next start.
--
-- K.ready K.delayed K.leased K.dead K.deadInfo K.completed K.messages K.tags K.readyLevels K.flowWaiting
-- ARGV[1] state   'ready', 'delayed', 'leased', 'dead', 'completed' or 'waiting-children'
-- ARGV[2] start   entries of the walk examined by earlier calls (0 at first)
-- ARGV[3] budget  most entries this call examines (>= 1)
-- ARGV[4] mode    'ids': answer the matches and their sort keys; 'count': only how many
-- ARGV[5] tag     '' for none
-- ARGV[6] from    push time from (ms, inclusive); '' for none
-- ARGV[7] to      push time to (ms, inclusive); '' for none
-- ARGV[8] error   a text a dead letter's last error contains; '' for none
-- Returns { next start or -1 when the walk is exhausted, matches, id, sort key, id, sort key, ... }
--         (ids and keys only in mode 'ids'; a sort key as prelude-filter.lua says)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.dead, 'zset', K.deadInfo, 'hash', K.completed,
  'zset', K.messages, 'hash', K.tags, 'hash', K.readyLevels, 'zset', K.flowWaiting, 'zset')

local function given(value)
  return value ~= '' and value or nil
end

local f = {
  state = ARGV[1],
  tag = given(ARGV[5]),
  from = tonumber(given(ARGV[6])),
  to = tonumber(given(ARGV[7])),
  error = given(ARGV[8]),
  keys = ARGV[4] == 'ids',
}
local ids, next_start, keys = filter_walk(f, tonumber(ARGV[2]), tonumber(ARGV[3]))
local out = { next_start or -1, #ids }
if ARGV[4] == 'ids' then
  for i, id in ipairs(ids) do
    out[#out + 1] = id
    out[#out + 1] = keys[i]
  end
end
return out
