-- TEMPORARY stand-in (branch h/bulk) until h/tags' prelude-filter.lua is merged: dead letters
-- only, no tag, in the order of K.dead; from/to/error tested per id. Locals only.
local function filter_walk(f, start, budget)
  start = start or 0
  local ids = redis.call('ZRANGE', K.dead, start, start + budget - 1)
  local out = {}
  for _, id in ipairs(ids) do
    local ok = true
    if f.from or f.to then
      local t = enqueued_at(redis.call('HGET', K.messages, id) or '')
      ok = t ~= nil and (not f.from or t >= f.from) and (not f.to or t <= f.to)
    end
    if ok and f.error then
      local info = redis.call('HGET', K.deadInfo, id) or ''
      local decoded = cjson.decode(info)
      ok = type(decoded.e) == 'string' and string.find(decoded.e, f.error, 1, true) ~= nil
    end
    if ok then
      out[#out + 1] = id
    end
  end
  if #ids < budget then
    return out, nil
  end
  return out, start + budget
end
