-- Listing: row previews and the page of delayed messages, after prelude.lua. Locals only.
--
-- A listed row carries its stored body without its one big member, and that member's JSON text
-- cut here, in Redis, so a page of 1 MiB messages costs a page of previews on the wire. A body
-- push wrote is '{"t":<ms>,"p":<payload>[,"h":{...}][,"g":"..."][,"m":<n>]}' (the payload is
-- cut), or compact '<enqueuedAt in base 36>|<payload>' (the payload is); a completed record is
-- '{"c":..,"t":..,"a":..[,"m":..][,"b":"<body>"][,"d":..][,"r":<result>]}' (the result is; the
-- body, a JSON string, is left out). A value a codec sealed (a body's '"e":"~<base64>"', a record's
-- '"s":"~<base64>"') cannot be read here: its preview is the sealed text's head, enough for the key
-- id it names, and its size the bytes the codec wrote.

-- Where the members after the payload start (',"h":', ',"g":' or ',"m":', the first present):
-- quotes inside strings are escaped, so the last unescaped ',"<name>":' of the body whose rest
-- reads as a JSON object is a member of the outer object. The closing brace when none is.
local function members_after_payload(body, from)
  for _, name in ipairs({ 'h', 'g', 'm' }) do
    local needle, last, at = ',"' .. name .. '":', nil, from
    while true do
      local found = string.find(body, needle, at, true)
      if not found then
        break
      end
      last, at = found, found + 1
    end
    if last and pcall(cjson.decode, '{' .. string.sub(body, last + 1)) then
      return last
    end
  end
  return #body
end

-- The JSON text body[first..last] cut to at most n bytes, never inside a UTF-8 character:
-- text, 1 when cut (else 0), its whole size in bytes.
local function cut_text(body, first, last, n)
  local size = last - first + 1
  if size <= n then
    return string.sub(body, first, last), 0, size
  end
  local stop = first + n
  -- 0x80-0xBF continue a character: step back to the byte that starts it.
  while stop > first and string.byte(body, stop) >= 128 and string.byte(body, stop) < 192 do
    stop = stop - 1
  end
  return string.sub(body, first, stop - 1), 1, size
end

-- Sealed text is base64 after a '~': at least this much of it shows the key id (2 + 64 bytes).
local SEALED_HEAD = 100

-- The preview of the sealed string member body[first..] ('~' up to the closing quote): its head,
-- 1 when cut, the bytes it decodes to. Returns also where the member's text ends.
local function sealed_preview(body, first)
  local last = (string.find(body, '"', first, true) or #body + 1) - 1
  local pads = string.sub(body, last - 1, last) == '==' and 2 or string.sub(body, last, last) == '=' and 1 or 0
  local text, cut = cut_text(body, first, last, SEALED_HEAD)
  return text, cut, math.floor((last - first) * 3 / 4) - pads, last
end

-- A row's body and preview: the body without its payload (or result), then that member's
-- text cut to n bytes, 1 when cut, its size. A body of another form is kept whole when it
-- has at most n bytes, else left out (false); either way with no preview (false, 0, size).
local function preview_row(body, n)
  if not body then
    return false, false, 0, 0
  end
  local first = string.match(body, '^{"t":%d+,"p":()')
  if first then
    local after = members_after_payload(body, first)
    local text, cut, size = cut_text(body, first, after - 1, n)
    return string.sub(body, 1, first - 6) .. string.sub(body, after), text, cut, size
  end
  first = string.match(body, '^{"t":%d+,"e":"()~')
  if first then
    local text, cut, size, last = sealed_preview(body, first)
    return string.sub(body, 1, first - 7) .. string.sub(body, last + 2), text, cut, size
  end
  first = string.match(body, '^%w+|()')
  if first then
    local text, cut, size = cut_text(body, first, #body, n)
    return string.sub(body, 1, first - 1), text, cut, size
  end
  if not string.match(body, '^{"c":%d+,') then
    return #body <= n and body or false, false, 0, #body
  end
  -- A record keeps its message's body as the string "b", before "d" and "r" (or "s"): the row goes without it.
  local kept = string.find(body, ',"b":"', 1, true)
  if kept then
    local after = string.find(body, ',"d":', kept, true)
      or string.find(body, ',"r":', kept, true)
      or string.find(body, ',"s":', kept, true)
      or #body
    body = string.sub(body, 1, kept - 1) .. string.sub(body, after)
  end
  local sealed = string.find(body, ',"s":"~', 1, true)
  if sealed then
    local text, cut, size, last = sealed_preview(body, sealed + 6)
    return string.sub(body, 1, sealed - 1) .. string.sub(body, last + 2), text, cut, size
  end
  local result = string.find(body, ',"r":', 1, true)
  if result then
    local text, cut, size = cut_text(body, result + 5, #body - 1, n)
    return string.sub(body, 1, result - 1) .. '}', text, cut, size
  end
  return #body <= n and body or false, false, 0, #body
end

-- Ranks first..last of K.delayed (WITHSCORES) as `list` shows delayed messages: the flow nodes held
-- at FLOW_HELD left out (a due time written past it by hand stays listed after them).
local function delayed_page(first, last)
  local held_from = redis.call('ZCOUNT', K.delayed, '-inf', '(' .. FLOW_HELD)
  local held = redis.call('ZCOUNT', K.delayed, FLOW_HELD, FLOW_HELD)
  local page = {}
  if last < first then
    return page
  end
  if first < held_from then
    page = redis.call('ZRANGE', K.delayed, first, math.min(last, held_from - 1), 'WITHSCORES')
  end
  if last >= held_from then
    for _, entry in ipairs(redis.call('ZRANGE', K.delayed, math.max(first, held_from) + held, last + held, 'WITHSCORES')) do
      page[#page + 1] = entry
    end
  end
  return page
end


-- The rows of a listed page, 6 per message: id, score or false, key mode and key or false, tags
-- (joined by NUL) or false, body or false, then its attempts count (ready, delayed,
-- waiting-children, completed), its lease token (leased) or its dead info record (dead), or false.
-- With a preview (bytes > 0), 9: the body without its payload (or result), then the fourth, then
-- the preview text or false, 1 when it was cut (else 0), and the payload's (result's) size.
local function listed_rows(state, ids, scores, preview)
  local out = {}
  if #ids == 0 then
    return out
  end
  -- A page may hold 10,000 rows: more than one unpack takes.
  local bodies = over_ids('HMGET', K.messages, ids)
  local key = state == 'leased' and K.tokens or state == 'dead' and K.deadInfo or K.attempts
  local extra = over_ids('HMGET', key, ids)
  local keyed = over_ids('HMGET', K.keyOf, ids)
  local tagged = over_ids('HMGET', K.tags, ids)
  for i, id in ipairs(ids) do
    out[#out + 1] = id
    out[#out + 1] = scores[i] or false
    out[#out + 1] = keyed[i] or false
    out[#out + 1] = tagged[i] or false
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
  -- Start-by deadlines: one array last, each row's ('<ms>', '<ms>:drop') or false; one EXISTS
  -- for a topic without any.
  if redis.call('EXISTS', K.deadlines) == 1 then
    out[#out + 1] = over_ids('HMGET', K.deadlines, ids)
  end
  return out
end
