-- push-keyed: stores messages pushed with a key mode, each against its key's state, in push
-- order (prelude-key-modes.lua keeps the states):
--   debounce  a key's message that has not started takes the new payload and is due delayMs
--             after this push (no later than maxWaitMs after the push that stored it); once it
--             started, the next push stores a new one.
--   throttle  the first push of a key opens a window of windowMs; pushes inside it change nothing.
--   supersede a key's message that has not started takes the new payload; with running 'cancel'
--             its started one is cancelled (its handler aborted, its late ack refused), and the
--             new one waits at most until that lease's deadline, or its consumer's ack of it;
--             with 'keep' the new one waits (at KEY_PARKED) until the started one ends.
-- A message's ids are new (a mode takes no id), it has no group and no flow.
--
-- K.messages K.ready K.delayed K.leased K.tokens K.attempts K.deferrals K.retryDue K.progress K.priority
-- K.readyLevels K.wake K.paused K.counters K.cancelled K.keyModes K.keyOf K.throttle K.stepIds
-- ARGV[1]  'r' when the call carries relay receipts (the outbox relay's; else the messages start
--          at ARGV[1]): then ARGV ends with one receipt per message ('' for none), after them
-- ARGV[1 or 2..] per message, nine:
--   mode         'd' debounce, 't' throttle, 'c' supersede cancelling, 'k' supersede keeping
--   key          1-256 characters
--   id           a new message id
--   body         as push.lua takes it (its enqueue time is put before it)
--   delayMs      ms from now (>= 0); of debounce: its delayMs
--   availableAt  earliest due time in epoch ms, or 0
--   priority     0-9
--   windowMs     of throttle: its window; of debounce: maxWaitMs, or '' for none
--   extras       '' or its start-by deadline, what it becomes once past, and tags (prelude-extras.lua):
--                a message that takes a later push's payload takes its extras too (a relative
--                deadline counts from its new due time)
-- Returns  per message three items: its code (1 stored, 0 duplicate: the window's holder, 4
--          debounced, 5 superseded: the key's pending message took the payload, 6 relayed before:
--          its receipt is held, nothing done for it), the id it names ('' for 6), and the id of
--          a message it cancelled ('' for none); then 1 if consumers were woken, else 0. A
--          receipt is recorded with any other code, and old ones pruned (prelude-receipts.lua).
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>; ACKQ_DEADLINE <index> <option>: a message's
--          deadline does not lie after its due time (nothing is written)
check_types(K.messages, 'hash', K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.tokens, 'hash',
  K.attempts, 'hash', K.deferrals, 'hash', K.priority, 'hash', K.readyLevels, 'zset', K.counters, 'hash',
  K.keyModes, 'hash', K.keyOf, 'hash', K.wake, 'list')
check_types(K.progress, 'hash', K.retryDue, 'hash', K.stepIds, 'set')
-- Where the messages are: ARGV[first .. last], nine each; their receipts follow when given.
local with_receipts = ARGV[1] == 'r'
local first = with_receipts and 2 or 1
local count = with_receipts and (#ARGV - 1) / 10 or #ARGV / 9
local last = first + 9 * count - 1
-- Each throttled key's window too, before anything is written; the error names its prefix, not
-- the key (user data).
for i = first, last, 9 do
  if ARGV[i] == 't' then
    local key = K.throttle .. ARGV[i + 1]
    local kind = redis.call('TYPE', key)['ok']
    if kind ~= 'none' and kind ~= 'string' then
      error({ err = 'ACKQ_WRONGTYPE ' .. K.throttle .. '* ' .. kind .. ' string' })
    end
  end
end

-- Relay receipts: a message relayed before is left out of every check and write.
local receipts, relayed = {}, {}
if with_receipts then
  receipts, relayed = receipts_relayed(last + 1, count)
end

local now = now_ms()
-- Each message's extras, read and checked before the first write (its due time as a new message).
local extras = {}
for i = first, last, 9 do
  local own = not relayed[(i - first) / 9 + 1] and extras_read(ARGV[i + 8])
  if own then
    local delay, max_wait = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 7])
    local due = ARGV[i] == 'd' and now + math.min(delay, max_wait or delay) or math.max(now + delay, tonumber(ARGV[i + 5]))
    extras_deadline(own, due, (i - first) / 9 + 1)
    extras[i] = own
  end
end
if next(extras) then
  extras_check(extras)
end
-- The extras of the push being applied (set per message below).
local current
local stamp, compact_stamp = body_stamps(now)
local results, stored, must_wake = {}, 0, false
-- Consumers sleep until the earliest due time: only an earlier one, or a ready message, wakes them.
local earliest = tonumber(redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')[2])

local function stamped(body)
  return (string.byte(body) == 124 and compact_stamp or stamp) .. body
end

-- Delivered at least once: leased now, or waiting for a retry.
local function started(id)
  return redis.call('HEXISTS', K.tokens, id) == 1 or redis.call('HEXISTS', K.attempts, id) == 1
    or redis.call('HEXISTS', K.deferrals, id) == 1
end

local function live(id)
  return id ~= '' and redis.call('HEXISTS', K.messages, id) == 1
end

local function set_level(id, level)
  if level > 0 then
    redis.call('HSET', K.priority, id, level)
  else
    redis.call('HDEL', K.priority, id)
  end
end

-- Places a message that waits nowhere: parked, due later in delayed, or at its level's tail.
local function place(id, due, parked)
  if parked then
    redis.call('ZADD', K.delayed, KEY_PARKED, id)
    return
  end
  if due > now then
    redis.call('ZADD', K.delayed, due, id)
    if earliest ~= nil and due >= earliest then
      return
    end
    earliest = due
  else
    make_ready('RPUSH', { id })
  end
  must_wake = true
end

-- The current push's deadline (counted from `due`) and tags, given to message `id`. Checked
-- against its due time as a new message before any write; one that waits longer for its key (a
-- drain) expires if its deadline comes first.
local function extras_given(id, due)
  if current then
    local deadline = current.kind and (current.kind == 'a' and current.ms or due + current.ms)
    extras_stored(id, current, deadline, now)
  end
end

local function store(id, body, level, mode, key, due, parked)
  redis.call('HSET', K.messages, id, stamped(body))
  set_level(id, level)
  redis.call('HSET', K.keyOf, id, mode .. key)
  place(id, due, parked)
  extras_given(id, due)
  stored = stored + 1
end

-- A message that has not started takes a new body, level and extras, and is placed again; one
-- ready at the same level that stays due keeps its place in line (no scan of the ready LIST).
local function replace(id, body, level, due, parked)
  redis.call('HSET', K.messages, id, stamped(body))
  if redis.call('EXISTS', K.deadlines, K.tags) > 0 then
    deadline_forget({ id })
    tags_forget({ id })
  end
  extras_given(id, due)
  local in_delayed = redis.call('ZREM', K.delayed, id) == 1
  if not in_delayed and not parked and due <= now and (tonumber(redis.call('HGET', K.priority, id)) or 0) == level then
    return
  end
  if not in_delayed then
    remove_ready(id)
  end
  set_level(id, level)
  place(id, due, parked)
end

-- Removes a superseded message for good, as cancel does. A leased one's consumer hears of it
-- (its handler aborts, its late ack is refused) and may run until its lease deadline: it
-- drains, its key kept in K.keyOf until its consumer's ack says its handler returned.
local function supersede_running(s)
  local id = s.cur
  local token = redis.call('HGET', K.tokens, id)
  drain_over(s)
  if token then
    s.drain, s.drain_until = id, tonumber(redis.call('ZSCORE', K.leased, id)) or now
    redis.call('PUBLISH', K.cancelled, token .. ' ' .. id)
  end
  if redis.call('ZREM', K.leased, id) == 0 and redis.call('ZREM', K.delayed, id) == 0 then
    remove_ready(id)
  end
  -- Its key's state is this caller's (s): a running one's entry stays while it drains.
  message_cancelled(id, 'superseded', token and 'drain' or 'left')
  s.cur = ''
  return id
end

local function debounce(id, key, body, level, delay, max_wait)
  local field = 'd' .. key
  local f = key_fields(redis.call('HGET', K.keyModes, field) or '')
  local pending, first = f[1] or '', tonumber(f[2]) or now
  if live(pending) and not started(pending) then
    replace(pending, body, level, max_wait and math.min(now + delay, first + max_wait) or now + delay)
    return 4, pending
  end
  store(id, body, level, 'd', key, max_wait and math.min(now + delay, now + max_wait) or now + delay)
  redis.call('HSET', K.keyModes, field, id .. '\0' .. string.format('%d', now))
  return 1, id
end

local function throttle(id, name, body, level, due, window)
  local key = K.throttle .. name
  local holder = key_fields(redis.call('GET', key) or '')
  if holder[1] and tonumber(holder[2]) and tonumber(holder[2]) > now then
    return 0, holder[1]
  end
  store(id, body, level, 't', name, due)
  local until_ms = now + window
  redis.call('SET', key, id .. '\0' .. string.format('%d', until_ms), 'PXAT', string.format('%d', until_ms))
  return 1, id
end

local function supersede(id, key, body, level, due, mode)
  local field = 's' .. key
  local s = supersede_state(field)
  -- What the state names may have moved on since: ended (by a path of a release that knew no
  -- keys), started (the pending one is now the running one), or drained (its lease ran out).
  if not live(s.cur) then
    s.cur = ''
  end
  if s.next ~= '' and not live(s.next) then
    s.next = ''
  elseif s.cur == '' and s.next ~= '' and started(s.next) then
    s.cur, s.next = s.next, ''
    drain_over(s)
  end
  if s.drain ~= '' and s.drain_until <= now then
    drain_over(s)
  end
  local cancelled = ''
  if mode == 'c' and s.cur ~= '' then
    cancelled = supersede_running(s)
  end
  local parked = s.cur ~= ''
  local code, target = 1, id
  if s.next ~= '' then
    code, target = 5, s.next
    redis.call('HSET', K.keyOf, s.next, mode .. key)
    replace(s.next, body, level, math.max(due, s.drain_until), parked)
  else
    store(id, body, level, mode, key, math.max(due, s.drain_until), parked)
    s.next = id
  end
  s.next_due = due
  supersede_save(field, s)
  return code, target, cancelled
end

for i = first, last, 9 do
  local mode, key, id, body = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local delay, at, level = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), tonumber(ARGV[i + 6])
  local due = math.max(now + delay, at)
  local code, target, cancelled
  current = extras[i]
  if relayed[(i - first) / 9 + 1] then
    code, target = 6, ''
  elseif mode == 'd' then
    code, target = debounce(id, key, body, level, delay, tonumber(ARGV[i + 7]))
  elseif mode == 't' then
    code, target = throttle(id, key, body, level, due, tonumber(ARGV[i + 7]))
  else
    code, target, cancelled = supersede(id, key, body, level, due, mode)
  end
  if current then
    -- Now, not once at the end: a later push of the same key may replace what this one gave.
    extras_flush()
  end
  results[#results + 1] = code
  results[#results + 1] = target
  results[#results + 1] = cancelled or ''
end

if stored > 0 then
  redis.call('HINCRBY', K.counters, 'pushed', stored)
end
if with_receipts then
  receipts_record(receipts, now)
end
results[#results + 1] = woken_by_push(must_wake) and 1 or 0
return results
