-- reserve: acks the leases given after ARGV[7] (exactly as ack does: a consumer acks what
-- finished and reserves more in one call), moves due delayed messages and expired leases
-- to ready (each to its priority level), then leases up to `count` ready messages, the
-- highest level first, grouped messages in their groups' turns (each group's head, groups taking
-- turns, half the batch when plain ones are ready too): each gets attempt + 1, a new token and a
-- deadline. A paused topic (partition) acks and moves but leases nothing, and says so with
-- nextDueInMs -2; a held one (rateLimited) or one at a fleet-wide limit leases no more than the
-- limit allows and answers when it opens.
-- A body that is not a JSON object goes to dead as 'malformed'; a message whose last
-- allowed attempt ended by lease expiry goes to dead as 'expired'. A message whose start-by
-- deadline passed (K.deadlines: now > deadline, server clock) never starts: the start check ends
-- one it takes (a group's next message may start in its place), and the sweep ends those
-- waiting (K.expiring, at most maxMoves a call), each as its onExpire says (docs/deadlines.md).
--
-- K.ready K.delayed K.leased K.messages K.attempts K.tokens K.dead K.deadInfo K.sequence K.wake K.paused
-- K.readyLevels K.groupQueue K.groupWaiting K.groupCount K.groupActive K.groupSlots K.groupTurns K.groupHeld
-- K.limits K.rateLog K.rateLast K.held K.counters K.retryDue K.stepIds K.deadlines K.expiring
-- ARGV[1]  count        messages to lease at most (>= 1)
-- ARGV[2]  leaseMs      lease length in ms
-- ARGV[3]  maxAttempts  default when a message carries none ("m" in its body)
-- ARGV[4]  maxMoves     bound on delayed and expired entries moved per call
-- ARGV[5]  deadMaxCount dead letters kept at most (the oldest go first)
-- ARGV[6]  deadMaxAgeMs dead letters older than this are deleted
-- ARGV[7]  current      '1': no process of a release before 0.2 runs on the prefix (its stored
--                       format is 'compact'), so leased and tokens keep the encoding anchor
--                       (prelude.lua) and due grouped messages join their groups' ZSETs; '0':
--                       neither, as those releases would count the anchor and miss the ZSETs
-- ARGV[8…] pairs: id, token of leases to ack first (none or up to 500)
-- Returns  { now, nextDueInMs (-1: none, -2: paused), deadline, flags (1: a rate limit or a group
--          quota is set, so the consumer must start what it leased at once; 2: a flow needs the sweep, see
--          prelude-flows.lua's flow_repair_due), n, n ack flags (as ack returns them),
--          dead (how many it sent to the dead letters: last lease expired, or malformed; absent
--          from the idle answers, which have no flags either), then per leased message its id and '<token> <body>', or '<token> <due> <body>' for a
--          retried or deferred one (the token, <sequence>.<attempt>, has no space; due is when it
--          became due, ms; two reply items per message, not four, are cheaper to read), then
--          (not in the idle answers) two arrays: the outbox entries written (child id, entry,
--          ...: flow children acked or dead, for the caller to pass on) and the flow parents
--          leased (id, its children's HASH as HGETALL reads it, ...: their handlers read no more),
--          then (not in the idle answers) the messages whose start-by deadline passed, ended by
--          this call (id, 'd' dead-lettered or 'x' dropped, ...) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>

-- Moving and taking work by priority level and group (only reserve does it; the preludes it
-- carries (levels, groups, limits, flows and the end of a message) have the rest).

-- Start-by deadlines: `timed` (one EXISTS a call) is whether any message of the topic (partition)
-- has one, so a topic without deadlines pays nothing more for them. A message may start while
-- now <= its deadline; `expired` lists those this call ended (id, 'd' or 'x'), for the reply.
local timed, expired = false, {}
local dead_max_count, dead_max_age

-- A K.deadlines value: the deadline (ms) and whether the message is dropped ('x') or
-- dead-lettered ('d') once it passes; nil for none.
local function deadline_of(value)
  if not value then
    return nil
  end
  local at, rest = string.match(value, '^(%d+)(.*)$')
  return tonumber(at), rest == ':drop' and 'x' or 'd'
end

-- Ends a message whose deadline passed, taken out of where it waited (`state`: 'ready' or
-- 'delayed'), as its onExpire says: a dead letter 'expired' (its deadline goes with it) or gone
-- as a cancel leaves it (a flow's child fails its parent with reason 'expired' either way).
local function deadline_passed(id, how, state, now)
  if how == 'x' then
    message_cancelled(id, state, nil, 'expired')
  else
    local attempt = tonumber(redis.call('HGET', K.attempts, id)) or 0
    message_dead(id, 'expired', 'the start-by deadline passed before it started', attempt, nil, now,
      dead_max_count, dead_max_age)
  end
  expired[#expired + 1] = id
  expired[#expired + 1] = how
end

-- Takes a waiting message out of where it waits: delayed (with its group's place, or as a flow
-- parent waiting for its children), its group's ZSET, or its level's ready LIST (only when
-- `may_scan`). Returns the state it was in, nil when it waits nowhere (it started, or ended,
-- meanwhile), or false when only a LIST scan would find it; then true when it scanned a LIST.
local function take_waiting(id, may_scan)
  local member = redis.call('HGET', K.groupWaiting, id)
  if member then
    redis.call('HDEL', K.groupWaiting, id)
    redis.call('ZREM', K.groupQueue, member)
  end
  if redis.call('ZREM', K.delayed, id) == 1 then
    redis.call('ZREM', K.flowWaiting, id)
    return 'delayed'
  end
  if member then
    return 'ready'
  end
  local group = body_group(redis.call('HGET', K.messages, id))
  local key = group and group_key(group)
  if key and redis.call('ZREM', key, id) == 1 then
    group_count_add(-1)
    return 'ready'
  end
  if not may_scan then
    return false
  end
  return (remove_ready(id) == 1 and 'ready' or nil), true
end

-- Ready LISTs a sweep may scan for the messages it ends (LREM reads from the head up to the
-- id): bounded, so a deep backlog behind expired messages never makes one call long. The rest
-- stay in K.expiring for the next call; the start check ends any of them reached first.
local SWEEP_LIST_SCANS = 50

-- The sweep: messages whose deadline passed while they wait (K.expiring scores below now, at
-- most max_moves) are taken out and ended. One that a release ignoring deadlines leased runs on.
local function sweep_expired(now, max_moves)
  local ids = redis.call('ZRANGE', K.expiring, '-inf', '(' .. string.format('%d', now), 'BYSCORE', 'LIMIT', 0, max_moves)
  if #ids == 0 then
    return
  end
  local marks = redis.call('HMGET', K.deadlines, unpack(ids))
  local leased = redis.call('ZMSCORE', K.leased, unpack(ids))
  local done, scans = {}, 0
  for i, id in ipairs(ids) do
    local at, how = deadline_of(marks[i])
    local state, scanned = nil, false
    if at and at < now and not leased[i] then
      state, scanned = take_waiting(id, scans < SWEEP_LIST_SCANS)
      if state then
        deadline_passed(id, how, state, now)
      end
    end
    if state ~= false then
      done[#done + 1] = id
    end
    if scanned then
      scans = scans + 1
    end
  end
  push_ids('ZREM', K.expiring, done)
end

-- Messages that wait to start again (their leases expired) keep their first deadline: back in
-- the sweep's index.
local function expiring_again(ids)
  local marks = redis.call('HMGET', K.deadlines, unpack(ids))
  local args = {}
  for i, id in ipairs(ids) do
    local at = deadline_of(marks[i])
    if at then
      args[#args + 1] = string.format('%d', at)
      args[#args + 1] = id
    end
  end
  push_ids('ZADD', K.expiring, args)
end

-- The start check of the ids taken to lease: those whose deadline passed are ended (their group's
-- slot freed, so the group's next message may start), the others leave the sweep's index.
-- Returns those that may start.
local function startable(ids, now)
  local marks = redis.call('HMGET', K.deadlines, unpack(ids))
  local live, started = {}, {}
  for i, id in ipairs(ids) do
    local at, how = deadline_of(marks[i])
    if at and at < now then
      deadline_passed(id, how, 'ready', now)
    else
      live[#live + 1] = id
      if at then
        started[#started + 1] = id
      end
    end
  end
  push_ids('ZREM', K.expiring, started)
  return live
end

-- Due delayed messages (at most max_moves) join the tail of their level in due order; a grouped
-- one waiting for its first start joins its group instead (when `gated`). They are the lowest
-- scores, so removing them by rank costs O(log n) per message moved, never a scan. Returns
-- true when a level above 0 got one.
local function ready_due(now, max_moves, gated, capacity)
  local due = redis.call('ZRANGE', K.delayed, '-inf', now, 'BYSCORE', 'LIMIT', 0, max_moves)
  if #due == 0 then
    return false
  end
  redis.call('ZREMRANGEBYRANK', K.delayed, 0, #due - 1)
  if gated then
    due = enqueue_due_grouped(due, capacity)
  end
  return make_ready('RPUSH', due)
end

-- Expired leases (at most max_moves) go back to the head of their level; dropping the token
-- makes a late ack fail, and their attempt moves from the token to the attempts hash. Their
-- next delivery was due when the lease ran out. Returns true when a level above 0 got one.
local function ready_expired(now, max_moves)
  local scored = redis.call('ZRANGE', K.leased, '-inf', now, 'BYSCORE', 'LIMIT', 0, max_moves, 'WITHSCORES')
  if #scored == 0 then
    return false
  end
  local expired, due_args = {}, {}
  for i = 1, #scored, 2 do
    expired[#expired + 1] = scored[i]
    due_args[#due_args + 1] = scored[i]
    due_args[#due_args + 1] = scored[i + 1]
  end
  local tokens = redis.call('HMGET', K.tokens, unpack(expired))
  local attempt_args = {}
  for i, id in ipairs(expired) do
    local attempt = token_attempt(tokens[i])
    if attempt then
      attempt_args[#attempt_args + 1] = id
      attempt_args[#attempt_args + 1] = attempt
    end
  end
  if #attempt_args > 0 then
    redis.call('HSET', K.attempts, unpack(attempt_args))
  end
  redis.call('HSET', K.retryDue, unpack(due_args))
  push_ids('HDEL', K.tokens, expired)
  redis.call('ZREMRANGEBYRANK', K.leased, 0, #expired - 1)
  if quoted then
    runs_ended(expired, now)
  end
  if timed then
    expiring_again(expired)
  end
  return make_ready('LPUSH', expired)
end

-- Whether plain (ungrouped) ids are ready; `used` as for pop_ready.
local function plain_left(used)
  return redis.call('LLEN', K.ready) > 0 or (#used > 0 and redis.call('ZCARD', K.readyLevels) > 0)
end

-- How much of `room` grouped ids may take first: all of it, or half while plain ones are ready
-- too, so neither kind starves. An odd room's extra place goes to each kind in turn (by the
-- parity of the lease counter, which every lease advances): a consumer reserving one at a time
-- (a loaded one does) would otherwise never reach a plain id while a deep group has a turn.
local function grouped_share(room, used)
  if not plain_left(used) then
    return room
  end
  local extra = room % 2 == 1 and (tonumber(redis.call('GET', K.sequence)) or 0) % 2 == 0
  return math.floor(room / 2) + (extra and 1 or 0)
end

-- Takes up to `room` ids to lease: grouped ones in their groups' turns (their share first, see
-- grouped_share) and plain ones in serving order. Returns false when none is ready (as LPOP does).
local function take_ready(room, used, gated, limits, now)
  local ids = {}
  if gated then
    ids = start_grouped(grouped_share(room, used), limits, now)
  end
  for _, id in ipairs(#ids < room and pop_ready(room - #ids, used) or {}) do
    ids[#ids + 1] = id
  end
  if gated and #ids < room then
    for _, id in ipairs(start_grouped(room - #ids, limits, now)) do
      ids[#ids + 1] = id
    end
  end
  return #ids > 0 and ids
end

-- When something becomes ready without a push: the first due time or lease deadline, the end of a
-- group's hold (with `gated`), or `opens` (a limit's end) while work waits for it; math.huge if none.
-- With deadlines, the moment after the first one of a waiting message: the sweep ends it then.
local function next_due_at(used, gated, opens)
  local next_delayed = redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')[2]
  local next_lease = redis.call('ZRANGE', K.leased, 0, 0, 'WITHSCORES')[2]
  local at = math.min(tonumber(next_delayed) or math.huge, tonumber(next_lease) or math.huge)
  if timed then
    local next_deadline = tonumber(redis.call('ZRANGE', K.expiring, 0, 0, 'WITHSCORES')[2])
    at = math.min(at, next_deadline and next_deadline + 1 or math.huge)
  end
  if gated then
    at = math.min(at, tonumber(redis.call('ZRANGE', K.groupHeld, 0, 0, 'WITHSCORES')[2]) or math.huge, held_until or math.huge)
    if opens < at and (plain_left(used) or redis.call('ZCARD', K.groupTurns) > 0) then
      at = opens
    end
  end
  return at
end

local count, lease_ms = tonumber(ARGV[1]), tonumber(ARGV[2])
local default_max, max_moves = tonumber(ARGV[3]), tonumber(ARGV[4])
dead_max_count, dead_max_age = tonumber(ARGV[5]), tonumber(ARGV[6])
local anchor = ARGV[7] == '1'
legacy_groups = not anchor
hold_ms = lease_ms

local paused = redis.call('EXISTS', K.paused) == 1
-- Groups, limits or a hold in use: one read, so a plain topic pays nothing more for them.
local gated = redis.call('EXISTS', K.limits, K.groupTurns, K.groupHeld, K.groupWaiting, K.held) > 0
timed = redis.call('EXISTS', K.deadlines) == 1

-- An idle consumer's periodic look: no acks, nothing ready, due or expired (or paused). A few
-- reads answer it, without the type checks: it writes nothing. A foreign key among those it
-- reads makes a read fail, and the full path below names that key; the others fail the first
-- call that has work (push checks them too).
if #ARGV == 7 and not gated then
  local now = now_ms()
  if paused then
    return { now, -2, now + lease_ms, 0, 0 }
  end
  local ready = redis.pcall('LLEN', K.ready)
  if ready == 0 then
    ready = redis.pcall('ZCARD', K.readyLevels)
  end
  local first_delayed = redis.pcall('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
  local first_lease = redis.pcall('ZRANGE', K.leased, 0, 0, 'WITHSCORES')
  -- With deadlines: the moment after the first one of a waiting message (then the sweep is due).
  local first_deadline = timed and redis.pcall('ZRANGE', K.expiring, 0, 0, 'WITHSCORES') or {}
  if ready == 0 and not first_delayed.err and not first_lease.err and not first_deadline.err then
    local next_delayed = tonumber(first_delayed[2]) or math.huge
    local next_lease = tonumber(first_lease[2]) or math.huge
    local next_sweep = first_deadline[2] and tonumber(first_deadline[2]) + 1 or math.huge
    if next_delayed > now and next_lease > now and next_sweep > now then
      local next_due = math.min(next_delayed, next_lease, next_sweep)
      return { now, next_due == math.huge and -1 or next_due - now, now + lease_ms, flow_repair_due(now), 0 }
    end
  end
end

check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash',
  K.tokens, 'hash', K.dead, 'zset', K.deadInfo, 'hash', K.sequence, 'string', K.wake, 'list', K.readyLevels, 'zset',
  K.counters, 'hash', K.retryDue, 'hash')
check_types(K.stepIds, 'set')
if timed then
  check_types(K.deadlines, 'hash', K.expiring, 'zset', K.flowWaiting, 'zset')
end
if gated then
  check_types(K.groupQueue, 'zset', K.groupWaiting, 'hash', K.groupCount, 'string', K.groupActive, 'hash',
    K.groupSlots, 'hash', K.groupTurns, 'zset', K.groupHeld, 'zset', K.limits, 'hash', K.rateLog, 'zset',
    K.rateLast, 'zset')
end
-- The level LISTs in use, checked before any write; a plain topic has none. (priority and
-- deferrals are checked by push, nack and ack, which write them.)
local used = redis.call('ZRANGE', K.readyLevels, 0, -1)
for _, level in ipairs(used) do
  check_types(level_key(tonumber(level)), 'list')
end

local acked = ack_leases(8)
local now = now_ms()
local limits = gated and group_limits() or {}
-- Swept first, so one expired while delayed leaves delayed without a trip through ready.
if timed then
  sweep_expired(now, max_moves)
end
-- A level now in use: `used` just needs to be non-empty (pop_ready reads the levels itself).
if ready_due(now, max_moves, gated, limits.gc or 1) then
  used = { '1' }
end
if ready_expired(now, max_moves) then
  used = { '1' }
end

local deadline = now + lease_ms
local out = { now, -1, deadline, ((limits.rm or limits.gm or limits.qt) and 1 or 0) + flow_repair_due(now), #acked }
for i = 1, #acked do
  out[#out + 1] = acked[i]
end
-- How many this call sent to the dead letters itself (last lease expired, or malformed).
local dead_at = #out + 1
out[dead_at] = 0
local parents = {}
-- How many may start now, and when a limit that stops them opens (math.huge: none stops them).
local room, opens = paused and 0 or count, math.huge
if gated and not paused then
  release_held_groups(now, max_moves, limits.gc or 1)
  if limits.rm or limits.gm then
    rate_sweep(now, rate_keep_ms(limits), max_moves)
  end
  if limits.qt then
    quota_sweep(now, limits.qt, math.min(count, max_moves) + 1)
  end
  room, opens = limits_room(count, limits, now)
end
local ids = room > 0 and take_ready(room, used, gated, limits, now)
-- Those past their deadline end instead of starting; others are taken in their place (a few
-- rounds at most, so one call stays short).
if ids and timed then
  local live, batch = {}, ids
  for round = 1, 4 do
    local checked = startable(batch, now)
    for _, id in ipairs(checked) do
      live[#live + 1] = id
    end
    local missing = #batch - #checked
    batch = missing > 0 and round < 4 and take_ready(missing, used, gated, limits, now)
    if not batch then
      break
    end
  end
  ids = #live > 0 and live
end
if ids then
  -- One command per batch, not per message: bodies and attempts are read together.
  local bodies = redis.call('HMGET', K.messages, unpack(ids))
  local attempts = redis.call('HMGET', K.attempts, unpack(ids))
  -- When each became due, for a retry or a deferred one (read and dropped: none on a plain first delivery).
  local dues = {}
  if redis.call('EXISTS', K.retryDue) == 1 then
    dues = redis.call('HMGET', K.retryDue, unpack(ids))
    redis.call('HDEL', K.retryDue, unpack(ids))
  end
  local token_base = redis.call('INCRBY', K.sequence, #ids) - #ids
  -- One read, so a topic without flow parents pays nothing more for them; then one for the batch.
  local open = redis.call('EXISTS', K.flowOpen) == 1 and redis.call('SMISMEMBER', K.flowOpen, unpack(ids))
  local lease_args, token_args = {}, {}
  -- Numbers passed to redis.call are formatted with %.17g, which costs more than the rest
  -- of a message's work: integers are formatted once here, and with %d.
  local deadline_text = string.format('%d', deadline)
  for i, id in ipairs(ids) do
    local body = bodies[i]
    local ok, max_attempts = false, nil
    if body and string.sub(body, 1, 5) == '{"t":' then
      -- Written by push: a JSON object whose "m", when set, is its last member. The client
      -- parses it anyway and buries it as malformed if someone else damaged the rest.
      -- Only a body ending in a digit and '}' may end with it (a grouped one ends '"}').
      local last = string.byte(body, -2)
      ok = true
      max_attempts = last >= 48 and last <= 57 and tonumber(string.match(string.sub(body, -20), ',"m":(%d+)}$')) or nil
    elseif body and string.find(body, '^%w+|') then
      -- Compact, written by push for a message without maxAttempts (prelude.lua's enqueued_at).
      ok = true
    elseif body then
      local decoded
      ok, decoded = pcall(cjson.decode, body)
      ok = ok and type(decoded) == 'table'
      max_attempts = ok and tonumber(decoded.m) or nil
    end
    local attempt = (tonumber(attempts[i]) or 0) + 1
    if not ok or attempt > (max_attempts or default_max) then
      out[dead_at] = out[dead_at] + 1
      message_dead(id, ok and 'expired' or 'malformed', ok and 'the lease of the last attempt expired' or
        (body and 'the stored body is not a JSON object' or 'the stored body is missing'),
        attempt - 1, max_attempts or default_max, now, dead_max_count, dead_max_age)
    else
      -- The attempt travels in the token: no write to the attempts hash per delivery.
      local token = string.format('%d.%d', token_base + i, attempt)
      lease_args[#lease_args + 1] = deadline_text
      lease_args[#lease_args + 1] = id
      token_args[#token_args + 1] = id
      token_args[#token_args + 1] = token
      out[#out + 1] = id
      out[#out + 1] = dues[i] and (token .. ' ' .. dues[i] .. ' ' .. body) or (token .. ' ' .. body)
      if open and open[i] == 1 then
        local key = K.flowChildren .. id
        parents[#parents + 1] = id
        parents[#parents + 1] = redis.call('HGETALL', key)
      end
    end
  end
  if #lease_args > 0 then
    if anchor then
      redis.call('ZADD', K.leased, 'NX', 'inf', ENCODING_ANCHOR)
      redis.call('HSETNX', K.tokens, ENCODING_ANCHOR, '1')
    else
      -- The prefix went back to json (a rollback on its way): an older release must not find one.
      redis.call('ZREM', K.leased, ENCODING_ANCHOR)
      redis.call('HDEL', K.tokens, ENCODING_ANCHOR)
    end
    redis.call('ZADD', K.leased, unpack(lease_args))
    redis.call('HSET', K.tokens, unpack(token_args))
    if limits.qt then
      local leased = {}
      for i = 1, #token_args, 2 do
        leased[#leased + 1] = token_args[i]
      end
      runs_started(leased, now)
    end
    if limits.rm then
      rate_record('', now, #lease_args / 2, rate_keep_ms(limits))
    end
  end
  -- Work is left: let another blocked consumer help (not for turns a blocked group holds back:
  -- its end wakes them).
  if plain_left(used) or (gated and not held_until and redis.call('ZCARD', K.groupTurns) > 0) then
    wake()
  end
end

-- Paused: the consumer waits for resume's wake-up, not for due times.
out[#out + 1] = flow_ended
out[#out + 1] = parents
out[#out + 1] = expired
if paused then
  out[2] = -2
  return out
end

-- The next moment something becomes ready without a push.
local next_due = next_due_at(used, gated, opens)
if next_due ~= math.huge then
  out[2] = math.max(0, next_due - now)
end
return out
