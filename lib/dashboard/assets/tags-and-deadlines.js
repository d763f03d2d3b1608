// A message's tags and start-by deadline as the rows and details show them (issue 41): tags as
// text chips (a tag is the user's text, never markup), the deadline with what it becomes after.
import { h, time } from './dom.js';

/** Tags as chips, in the order pushed. */
export const tagList = (tags) =>
  h(
    'span',
    { class: 'tags' },
    tags.map((tag) => h('span', { class: 'tag' }, tag)),
  );

/** A start-by deadline, and `then dropped` when it drops rather than dead-letters; `–` when none. */
export function startBy(message) {
  if (message.startBy === undefined) return '–';
  return h('span', {}, time(message.startBy), message.onExpire === 'drop' ? ' then dropped' : '');
}
