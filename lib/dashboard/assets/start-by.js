// A message's start-by deadline (issue 41) as the rows and details show it: the time, and what
// the message becomes once it passes unstarted when that is not a dead letter.
import { h, time } from './dom.js';

/** The deadline, with `then dropped` when it drops rather than dead-letters; `–` when none. */
export function startBy(message) {
  if (message.startBy === undefined) return '–';
  return h('span', {}, time(message.startBy), message.onExpire === 'drop' ? ' then dropped' : ' then dead-lettered');
}
