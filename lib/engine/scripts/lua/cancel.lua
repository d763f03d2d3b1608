-- cancel: removes one message for good, whatever its state, with every key that holds
-- something of it. A leased one loses its token (its late ack or nack changes nothing) and
-- its id is published on the cancelled channel, so the consumer running it aborts its handler.
-- A leased one of a supersede key holds its key as a superseded one does: the key's next
-- message starts once its consumer's refused ack says the handler returned, or at its deadline.
--
-- K.ready         LIST   ids waiting, head first
-- K.delayed       ZSET   id -> due time (ms)
-- K.leased        ZSET   id -> lease deadline (ms)
-- K.messages      HASH   id -> stored body
-- K.attempts      HASH   id -> deliveries whose lease ended unacked
-- K.tokens        HASH   id -> token of the current lease
-- K.dead          ZSET   id -> time of death (ms)
-- K.deadInfo      HASH   id -> JSON reason of death
-- K.completed     ZSET   id -> completion time (ms)
-- K.progress      HASH   id -> JSON progress value of a leased message
-- K.cancelled     CHANNEL (pub/sub, not a key) that consumers of the topic listen on:
--          a leased message's cancel publishes '<token> <id>' there
-- K.priority      HASH   id -> priority level 1-9 (none: level 0)
-- K.deferrals     HASH   id -> times deferred by retryLater
-- K.readyLevels   ZSET   level -> level: the levels 1-9 whose ready LIST holds ids
-- K.ready1        LIST   ids waiting at priority 1 (and so on up to ready9)
-- K.ready2        LIST
-- K.ready3        LIST
-- K.ready4        LIST
-- K.ready5        LIST
-- K.ready6        LIST
-- K.ready7        LIST
-- K.ready8        LIST
-- K.ready9        LIST
-- K.groupQueue    ZSET   grouped messages an earlier version left waiting (drained only)
-- K.groupWaiting  HASH   id -> '<group>\0<sequence>\0<id>' of a delayed grouped message
-- K.groups        PREFIX of each group's ZSET of waiting ids (id -> sequence), not a key
-- K.groupCount    STRING grouped messages waiting in the groups' ZSETs
-- K.groupActive   HASH   id -> group, started until ended
-- K.groupSlots    HASH   group -> started messages not ended
-- K.groupTurns    ZSET   group -> turn
-- K.groupHeld     ZSET   group -> ms its rate limit holds it until
-- K.groupSequence STRING counter of group order and turns
-- K.limits        HASH   fleet-wide limits
-- K.rateLog       ZSET   starts in the current rate window of the topic and each group
-- K.rateLast      ZSET   topic ('') or group -> ms of its last start in rateLog
-- K.held          STRING present while rateLimited holds the topic
-- K.groupWeights  HASH   group -> weight (none: round robin)
-- K.groupPasses   ZSET   '' -> virtual clock, group -> its next weighted turn
-- K.wake          LIST   wake-up token for blocked consumers
-- K.retryDue      HASH   id -> when its next delivery became due (ms), until it is leased
-- K.flowParents   HASH   child id -> its parent, the flow's root, its own delay (JSON)
-- K.flowChildren  PREFIX of each parent's HASH of children (see queue-keys.ts), not a key
-- K.flowOpen      SET    parents whose children's HASH exists
-- K.flowWaiting   ZSET   parent id -> since when it waits for its children
-- K.flowOutbox    HASH   child id -> an end its parent has not heard yet
-- K.flowOutboxDue ZSET   child id -> when its outbox entry was written
-- K.flowSequence  STRING counter ordering the outbox entries of a child
-- K.flowUncommitted ZSET id -> time stored, of flow nodes whose root is not stored yet
-- K.steps         PREFIX of each message's HASH of durable steps, `<steps><id>`, not a key
-- K.stepIds       SET    ids of the messages that have steps
-- K.keys          HASH   each key's state (prelude-keys.lua)
-- K.keyOf         HASH   id -> mode and key, of a live keyed message
-- ARGV[1]  id
-- Returns  false when no message had this id, else { the state it was in ('ready', 'delayed',
--          'leased', 'dead', 'completed' or 'waiting-children'), the outbox entries written
--          (child id, entry: a flow's child, whose parent hears of it; for the caller to pass
--          on), then the children of a flow's parent that had not ended (their fields, to be
--          cancelled in turn) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
local id = ARGV[1]
check_types(K.ready, 'list', K.delayed, 'zset', K.leased, 'zset', K.messages, 'hash', K.attempts, 'hash',
  K.tokens, 'hash', K.dead, 'zset', K.deadInfo, 'hash', K.completed, 'zset', K.progress, 'hash',
  K.priority, 'hash', K.deferrals, 'hash', K.readyLevels, 'zset')
check_types(K.stepIds, 'set')

-- The group a stored body names ("g"), or nil.
local function body_group(body)
  local ok, decoded = pcall(cjson.decode, body or '')
  return ok and type(decoded) == 'table' and type(decoded.g) == 'string' and decoded.g or nil
end

-- A message removed for good (cancel) leaves its group: out of its group's ZSET (or an earlier
-- version's groupQueue) if it waits for its first start there (true then), out of groupWaiting
-- if delayed, else its slot freed if it holds one.
local function group_forget(id, state)
  local member = redis.call('HGET', K.groupWaiting, id)
  if member then
    redis.call('HDEL', K.groupWaiting, id)
    return redis.call('ZREM', K.groupQueue, member) == 1
  end
  local group = state == 'ready' and body_group(redis.call('HGET', K.messages, id))
  local key = group and group_key(group)
  if key and redis.call('ZREM', key, id) == 1 then
    -- Its group keeps its turn, if it had one: a turn whose group is empty is dropped when served.
    group_count_add(-1)
    return true
  end
  leases_ended({ id })
  return false
end

-- A running message of a supersede key, cancelled: its handler may run on until its lease's
-- deadline, so it drains as push-keyed.lua's supersede_running leaves a superseded one (its
-- key kept in K.keyOf until its consumer's refused ack, key_drained, or the deadline), and a
-- message waiting for it starts no sooner. Any other keyed message leaves its key at once.
local function key_cancelled_running(deadline)
  local value = redis.call('HGET', K.keyOf, id)
  local mode = value and string.sub(value, 1, 1)
  if mode ~= 'c' and mode ~= 'k' then
    keys_ended({ id })
    return
  end
  local field = 's' .. string.sub(value, 2)
  local s = supersede_state(field)
  -- The state may still name a started message as the waiting one (push-keyed.lua moves it on).
  if s.cur == id then
    s.cur = ''
  elseif s.next == id then
    s.next = ''
  else
    keys_ended({ id })
    return
  end
  drain_over(s)
  s.drain, s.drain_until = id, deadline
  if s.next ~= '' and redis.call('ZSCORE', K.delayed, s.next) == KEY_PARKED then
    key_release(s.next, math.max(s.next_due, deadline), now_ms())
  end
  supersede_save(field, s)
end

local state = false
local deadline = tonumber(redis.call('ZSCORE', K.leased, id))
if redis.call('ZREM', K.completed, id) == 1 then
  state = 'completed'
elseif redis.call('ZREM', K.dead, id) == 1 then
  state = 'dead'
  redis.call('HDEL', K.deadInfo, id)
elseif deadline then
  state = 'leased'
  redis.call('ZREM', K.leased, id)
  local token = redis.call('HGET', K.tokens, id) or ''
  redis.call('HDEL', K.tokens, id)
  redis.call('PUBLISH', K.cancelled, token .. ' ' .. id)
elseif redis.call('ZREM', K.delayed, id) == 1 then
  state = 'delayed'
elseif redis.call('HEXISTS', K.messages, id) == 1 then
  -- Neither delayed, leased, dead nor completed: in its level's ready LIST (a scan from its head).
  state = 'ready'
  if not group_forget(id, state) then
    remove_ready(id)
  end
end
if state and state ~= 'ready' then
  group_forget(id, state)
end
local reply = state and { state, flow_ended }
if state and flow_used() then
  -- A parent's children that have not ended are cancelled in turn by the caller; a child's
  -- cancel counts as its failure.
  if redis.call('ZREM', K.flowWaiting, id) == 1 then
    reply[1] = 'waiting-children'
  end
  local key = K.flowChildren .. id
  local children = redis.call('HGETALL', key)
  for i = 1, #children, 2 do
    if children[i + 1] == 'p' then
      reply[#reply + 1] = children[i]
    end
  end
  if state ~= 'dead' then
    flow_child_ended(id, 'f', cjson.encode({ r = 'cancelled' }))
  end
  flow_forget({ id })
end
if state == 'leased' then
  key_cancelled_running(deadline)
elseif state then
  keys_ended({ id })
end
if state then
  redis.call('HDEL', K.messages, id)
  redis.call('HDEL', K.attempts, id)
  redis.call('HDEL', K.progress, id)
  redis.call('HDEL', K.priority, id)
  redis.call('HDEL', K.deferrals, id)
  redis.call('HDEL', K.retryDue, id)
  steps_forget({ id })
end
return reply
