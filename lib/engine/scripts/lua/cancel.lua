-- cancel: removes one message for good, whatever its state, with every key that holds
-- something of it. A leased one loses its token (its late ack or nack changes nothing) and
-- its id is published on the cancelled channel, so the consumer running it aborts its handler.
-- A leased one of a supersede key holds its key as a superseded one does: the key's next
-- message starts once its consumer's refused ack says the handler returned, or at its deadline.
--
-- (its keys are prelude-cancel.lua's)
-- ARGV[1]  id
-- ARGV[2]  'live' (a parent's cancel reaching its children): a message that has ended (dead,
--          completed) is left as it is, and the answer is false
-- Returns  false when no message had this id, else { the state it was in ('ready', 'delayed',
--          'leased', 'dead', 'completed' or 'waiting-children'), the outbox entries written
--          (child id, entry: a flow's child, whose parent hears of it; for the caller to pass
--          on), then the children of a flow's parent that had not ended (their fields, to be
--          cancelled in turn, live ones only: pending ones, and failed ones, which may have
--          been requeued since) }
-- Errors   ACKQ_WRONGTYPE <key> <actual> <expected>
cancel_check_types()
return cancel_message(ARGV[1], ARGV[2] == 'live')
