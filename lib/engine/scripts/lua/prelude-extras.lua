-- Start-by deadlines and tags: what a push may give a message beside its body (push.lua's and
-- push-keyed.lua's extras), read and checked before any write, then stored. prelude-end.lua
-- deletes both when the message ends. Locals only; it needs no other prelude.

-- The latest time a Date can hold (ms): no deadline lies beyond it.
local MAX_DATE_MS = 8640000000000000

-- A push's extras, '<deadline>\n<onExpire>\n<tags>' (wire-format.ts encodes them): deadline ''
-- (none), 'a<ms>' (startBy) or 'r<ms>' (expiresInMs, counted from the due time); onExpire '' or
-- 'drop'; tags joined by NUL (a tag holds no control character). nil for '' (none).
local function extras_read(text)
  if text == nil or text == '' then
    return nil
  end
  local spec, on_expire, tags = string.match(text, '^([^\n]*)\n([^\n]*)\n(.*)$')
  local kind = spec and string.sub(spec, 1, 1) or ''
  return { kind = kind ~= '' and kind or nil, ms = tonumber(string.sub(spec or '', 2)), drop = on_expire == 'drop',
    tags = tags or '' }
end

-- The deadline of a message due at `due` (ms), nil when it has none. Fails the call when it does
-- not lie after `due` (a startBy already past, by this server's clock, or before the delay ends)
-- or past the Date range: callers ask it for every message before their first write. `index`
-- (the message's place in the call) and the option's name are all the error says.
-- A flow's node (`held`, due once its flow lets it: flow_release) is judged against `due` = now,
-- and its expiresInMs stays unanchored ('r<ms>') until then.
local function extras_deadline(extras, due, index, held)
  if not extras or not extras.kind then
    return nil
  end
  if held and extras.kind == 'r' then
    return 'r' .. string.format('%d', extras.ms)
  end
  local deadline = extras.kind == 'a' and extras.ms or due + extras.ms
  if deadline <= due or deadline > MAX_DATE_MS then
    error({ err = 'ACKQ_DEADLINE ' .. index .. ' ' .. (extras.kind == 'a' and 'startBy' or 'expiresInMs') })
  end
  return deadline
end

-- The tag index keys of a call's extras checked before any write (a foreign key fails the call
-- unchanged); the error names the index's prefix, never a tag (user data).
local function extras_check(all)
  check_types(K.deadlines, 'hash', K.expiring, 'zset', K.tags, 'hash')
  local seen = {}
  for _, extras in pairs(all) do
    for tag in string.gmatch(extras.tags, '[^%z]+') do
      if not seen[tag] then
        seen[tag] = true
        local kind = redis.call('TYPE', K.tagIndex .. tag)['ok']
        if kind ~= 'none' and kind ~= 'zset' then
          error({ err = 'ACKQ_WRONGTYPE ' .. K.tagIndex .. '* ' .. kind .. ' zset' })
        end
      end
    end
  end
end

-- The deadline as K.deadlines keeps it: '<ms>', or '<ms>:drop' ('r<ms>...' for a held flow node's).
local function deadline_field(deadline, drop)
  local text = type(deadline) == 'string' and deadline or string.format('%d', deadline)
  return drop and text .. ':drop' or text
end

-- What extras_stored collected, written by extras_flush with one command per key.
local extras_pending = { deadlines = {}, expiring = {}, tags = {}, by_tag = {}, tag_order = {} }

-- A new message's deadline (nil: none) and tags (pushed_at, its enqueue time, scores the tag
-- index: `list` and `bulk` select by push time within a tag), written at the next extras_flush.
local function extras_stored(id, extras, deadline, pushed_at)
  local p = extras_pending
  if deadline then
    p.deadlines[#p.deadlines + 1] = id
    p.deadlines[#p.deadlines + 1] = deadline_field(deadline, extras.drop)
    -- A held flow node's expiresInMs ('r<ms>') joins the sweep once its flow lets it run.
    if type(deadline) == 'number' then
      p.expiring[#p.expiring + 1] = string.format('%d', deadline)
      p.expiring[#p.expiring + 1] = id
    end
  end
  if extras and extras.tags ~= '' then
    p.tags[#p.tags + 1] = id
    p.tags[#p.tags + 1] = extras.tags
    local at = string.format('%d', pushed_at)
    for tag in string.gmatch(extras.tags, '[^%z]+') do
      local members = p.by_tag[tag]
      if not members then
        members = {}
        p.by_tag[tag] = members
        p.tag_order[#p.tag_order + 1] = tag
      end
      members[#members + 1] = at
      members[#members + 1] = id
    end
  end
end

-- Writes what extras_stored collected: a batch of messages costs one command per key, not per message.
local function extras_flush()
  local p = extras_pending
  push_ids('HSET', K.deadlines, p.deadlines)
  push_ids('ZADD', K.expiring, p.expiring)
  push_ids('HSET', K.tags, p.tags)
  for _, tag in ipairs(p.tag_order) do
    push_ids('ZADD', K.tagIndex .. tag, p.by_tag[tag])
  end
  extras_pending = { deadlines = {}, expiring = {}, tags = {}, by_tag = {}, tag_order = {} }
end
