// A topic's top groups in its view: the ten with the most handler time over the last hour, with
// their counts (queue.groupUsage()). Group names are the user's data: they go in as text only.
// Read at most every few seconds: the counts arrive once a second per process.
import { api } from './api.js';
import { count, h } from './dom.js';
import { millis } from './history-panel.js';

const EVERY_MS = 5_000;
const COLUMNS = [
  ['handled', 'Handled'],
  ['failed', 'Failed'],
  ['retried', 'Retried'],
  ['dead', 'Dead'],
];

/** The Top groups section of a topic's view; `refresh()` reads when due. */
export function groupUsagePanel(topic) {
  let readAt = 0;
  const status = h('p', { class: 'muted', id: 'group-usage-status' });
  const body = h('tbody');
  const table = h(
    'table',
    { id: 'group-usage-table', class: 'grid', hidden: true },
    h('caption', { class: 'visually-hidden' }, 'Top groups of the last hour, most handler time first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Group'),
        COLUMNS.map(([, heading]) => h('th', { scope: 'col', class: 'num' }, heading)),
        h('th', { scope: 'col', class: 'num' }, 'Handler time'),
      ),
    ),
    body,
  );
  const element = h(
    'section',
    { id: 'group-usage', 'aria-labelledby': 'group-usage-title' },
    h('h2', { id: 'group-usage-title' }, 'Top groups'),
    status,
    table,
  );

  async function refresh() {
    if (Date.now() - readAt < EVERY_MS) return;
    readAt = Date.now();
    try {
      const usage = await api.groupUsage(topic);
      body.replaceChildren(
        ...usage.groups.map((row) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row', class: 'wrap' }, row.group),
            COLUMNS.map(([key]) => h('td', { class: 'num' }, count(row[key]))),
            h('td', { class: 'num' }, millis(row.handlerMs)),
          ),
        ),
      );
      table.hidden = usage.groups.length === 0;
      status.className = 'muted';
      status.textContent =
        usage.groups.length === 0
          ? 'No ordered group used this topic in the last hour.'
          : `${count(usage.groups.length)} of ${count(usage.groupCount)} groups that used the topic in the last hour, most handler time first.`;
    } catch (error) {
      readAt = 0;
      status.className = 'error';
      status.textContent = `Could not read the groups' usage: ${error.message}`;
    }
  }
  return { element, refresh };
}
