// A message pushed with a key mode (debounce, throttle, supersede) as the table and the details
// show it: its key with its mode, and whether it waits for its key's running message.
import { h } from './dom.js';

/** Its key as text, its mode muted after it; '–' for a message pushed without a key mode. */
export const keyAndMode = (message) =>
  message.key === undefined ? '–' : [message.key, ' ', h('span', { class: 'muted' }, `(${message.mode})`)];

/**
 * A supersede message that waits for its key's running one to end (running: 'keep'): delayed,
 * with no due time of its own.
 */
export const waitsForKey = (message) =>
  message.state === 'delayed' && message.dueAt === undefined && message.mode === 'supersede';
