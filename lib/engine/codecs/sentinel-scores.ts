/**
 * Scores of `delayed` that are never due, as the Lua scripts spell them (prelude.lua; a unit test
 * keeps both equal). Strings: the scores pass through Redis as text, and 2^53 - 1 is past any due
 * time a Date can hold.
 */

/** A flow node held for something other than time: a parent for its children, a child for its flow's root. */
export const FLOW_HELD = '9007199254740991';

/** A message waiting for its key's running one to end (supersede with running 'keep'): listed after every due time. */
export const KEY_PARKED = '9007199254740990';
