-- group-quotas-get: the quotas of a topic's ordered groups (of one partition of it), as
-- group-quotas-set wrote them.
--
-- K.groupQuotas
-- ARGV    none
-- Returns the quotas' field, value pairs ('q' is the default, 'q<group>' a group's)
-- Errors  ACKQ_WRONGTYPE <key> <actual> <expected>
check_types(K.groupQuotas, 'hash')

local fields, quotas = redis.call('HGETALL', K.groupQuotas), {}
for i = 1, #fields, 2 do
  -- Not the groups' state kept beside them (prelude-quotas.lua).
  if string.byte(fields[i]) == 113 then
    quotas[#quotas + 1] = fields[i]
    quotas[#quotas + 1] = fields[i + 1]
  end
end
return quotas
