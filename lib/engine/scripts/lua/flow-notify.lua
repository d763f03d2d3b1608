-- flow-notify: parents hear how some of their children ended (the children's outbox entries; a
-- child may live in another slot). A child's field records its end unless it holds a later end
-- already. Then, per parent, while it waits: a dead child that fails it ('f' policy) sends it to
-- the dead letters as 'child-failed'; once every child ended and none fails it, it becomes due
-- (now + its delayMs, or its availableAt: ready at once when that is now). A parent dead as
-- 'child-failed' whose failed children all ended well since (requeued) comes back: due, or
-- waiting for the rest. The ends of one parent are read and written together (its HASH once
-- each way), so the acks a batch ended cost a few commands per parent, not per child.
--
-- K.delayed K.wake K.paused K.dead K.deadInfo K.flowChildren K.flowWaiting
-- ARGV[1] deadMaxCount  dead letters kept at most
-- ARGV[2] deadMaxAgeMs  dead letters older than this are deleted
-- ARGV[3..] per end, eight values:
--   parent   the parent's id
--   field    the child's field in the parent's HASH
--   seq      the sequence of the child's end
--   outcome  'a' acked, 'f' dead or cancelled
--   policy   the child's onChildFailure: 'f' fail the parent, 'c' continue
--   payload  the child's result (complete.lua's extra) or why it failed (JSON)
--   error    the text a parent sent to the dead letters keeps
--   child    the child, when it lives in this slot: its outbox entry is dropped here (as
--            flow-clear.lua does), so the end costs no call of its own; '' else
-- Returns one code per end: 0 nothing to hear (the parent ended, or a later end was heard), 1
--         recorded, 2 its parent went to the dead letters (this end failed it), 3 its parent
--         became due (this end was its last), 4 its parent came back to waiting; then the outbox
--         entries written (the dead parents' own ends, when they are children: for the caller
--         to pass on)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
local max_count, max_age = tonumber(ARGV[1]), tonumber(ARGV[2])
local SIZE = 8

-- The ends by parent, in the order the parents first come; each end by its first ARGV index.
local parents, ends_of, codes, here, here_seqs = {}, {}, {}, {}, {}
for i = 3, #ARGV, SIZE do
  local parent = ARGV[i]
  if not ends_of[parent] then
    ends_of[parent] = {}
    parents[#parents + 1] = parent
  end
  table.insert(ends_of[parent], i)
  codes[#codes + 1] = 0
  if ARGV[i + 7] ~= '' then
    here[#here + 1] = ARGV[i + 7]
    here_seqs[#here_seqs + 1] = ARGV[i + 2]
  end
end
local function code(i, value)
  codes[(i - 3) / SIZE + 1] = value
end

check_types(K.delayed, 'zset', K.dead, 'zset', K.deadInfo, 'hash', K.flowWaiting, 'zset')
for _, parent in ipairs(parents) do
  check_types(K.flowChildren .. parent, 'hash')
end

if #here > 0 then
  outbox_heard(here, here_seqs)
end

local now = now_ms()
-- Parents that became due, with their due times: released together at the end.
local due_ids, due_times = {}, {}

-- One parent hears its ends (ARGV indexes).
local function hear(parent, ends)
  local key = K.flowChildren .. parent
  local fields = { '#', '!', '@' }
  for _, i in ipairs(ends) do
    fields[#fields + 1] = ARGV[i + 1]
  end
  local current = redis.call('HMGET', key, unpack(fields))
  local pending, failing = tonumber(current[1]), tonumber(current[2]) or 0
  if not pending then
    return
  end
  -- Each field's value as of the ends heard so far (a child's later end in the same call wins).
  local values, writes, failed, last = {}, {}, nil, nil
  for k, i in ipairs(ends) do
    local field, seq, outcome, policy = ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3], ARGV[i + 4]
    local value = values[field] or current[k + 3]
    local record = value ~= false and value ~= nil
    if value == 'p' then
      pending = pending - 1
    elseif record then
      local heard, was = string.match(value, '^(%d+)\n(%a%a)')
      if tonumber(heard) >= seq then
        record = false
      elseif was == 'ff' then
        failing = failing - 1
      end
    end
    if record then
      if outcome == 'f' and policy == 'f' then
        failing = failing + 1
        failed = failed or i
      end
      values[field] = seq .. '\n' .. outcome .. policy .. '\n' .. ARGV[i + 5]
      code(i, 1)
      last = i
    end
  end
  if not last then
    return
  end
  for field, value in pairs(values) do
    writes[#writes + 1] = field
    writes[#writes + 1] = value
  end
  writes[#writes + 1] = '#'
  writes[#writes + 1] = string.format('%d', pending)
  writes[#writes + 1] = '!'
  writes[#writes + 1] = string.format('%d', failing)
  push_ids('HSET', key, writes)

  local waiting = redis.call('ZSCORE', K.flowWaiting, parent)
  local resumable = false
  if not waiting and redis.call('ZSCORE', K.dead, parent) then
    local ok, info = pcall(cjson.decode, redis.call('HGET', K.deadInfo, parent) or '')
    resumable = ok and type(info) == 'table' and info.r == 'child-failed'
  end
  -- A waiting parent fails when one of these ends fails it; a parent requeued from the dead
  -- letters waits with failed children counted until their requeued runs end well (flow-resume.lua).
  if waiting and failed then
    redis.call('ZREM', K.flowWaiting, parent)
    redis.call('ZREM', K.delayed, parent)
    message_dead(parent, 'child-failed', ARGV[failed + 6], 0, nil, now, max_count, max_age)
    code(failed, 2)
    return
  end
  if failing > 0 or not (waiting or resumable) then
    return
  end
  if resumable then
    redis.call('ZREM', K.dead, parent)
    redis.call('HDEL', K.deadInfo, parent)
  end
  if pending > 0 then
    if resumable then
      redis.call('ZADD', K.delayed, FLOW_HELD, parent)
      redis.call('ZADD', K.flowWaiting, now, parent)
      code(last, 4)
    end
    return
  end
  redis.call('ZREM', K.flowWaiting, parent)
  local delay, at = string.match(current[3] or '', '^(%d+) (%d+)$')
  due_ids[#due_ids + 1] = parent
  due_times[#due_times + 1] = math.max(now + (tonumber(delay) or 0), tonumber(at) or 0)
  code(last, 3)
end

for _, parent in ipairs(parents) do
  hear(parent, ends_of[parent])
end
if #due_ids > 0 then
  flow_release(due_ids, due_times, now)
  if redis.call('EXISTS', K.paused) == 0 then
    wake()
  end
end
codes[#codes + 1] = flow_ended
return codes
