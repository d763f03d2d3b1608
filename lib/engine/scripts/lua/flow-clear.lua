-- flow-clear: drops a child's outbox entry once its parent heard it, unless a later end of the
-- child replaced it meanwhile (that one is still to be heard).
--
-- (its keys are the flow prelude's)
-- ARGV[1] id   the child
-- ARGV[2] seq  the sequence of the entry its parent heard
-- Returns 1 dropped, 0 not (gone, or replaced)
return outbox_heard(ARGV[1], ARGV[2]) and 1 or 0
