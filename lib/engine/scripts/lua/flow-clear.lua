-- flow-clear: drops children's outbox entries once their parents heard them, each unless a later
-- end of its child replaced it meanwhile (that one is still to be heard).
--
-- (its keys are the flow prelude's)
-- ARGV pairs: id (the child), seq (the sequence of the entry its parent heard)
-- Returns how many were dropped
local ids, seqs = {}, {}
for i = 1, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  seqs[#seqs + 1] = ARGV[i + 1]
end
return outbox_heard(ids, seqs)
