// The first page: every registered topic with its counts, last hour's trend, lag and pause
// state, searched by name and paged, so a thousand topics stay usable; and the outbox, when the
// service has one.
import { api } from './api.js';
import { count, duration, h, label, pager, scroller } from './dom.js';
import { outboxPanel } from './outbox-panel.js';
import { rate, ratesOf } from './rates.js';
import { topicHref } from './routes.js';
import { gaugeOf, STATES } from './states.js';
import { newTrendTable, refreshTrends, trendCell } from './trends.js';

const PAGE = 50;
const COLUMNS = STATES;

export function topicsView(state, rerender) {
  const search = h('input', {
    id: 'topic-search',
    type: 'search',
    value: state.search ?? '',
    placeholder: 'Part of a topic name',
    autocomplete: 'off',
  });
  let debounce;
  search.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => rerender({ search: search.value, offset: 0 }), 250);
  });
  const body = h('div', { id: 'topics-body' });
  const outbox = outboxPanel(() => rerender({}));
  const view = h(
    'section',
    { 'aria-labelledby': 'topics-title' },
    h('h1', { id: 'topics-title' }, 'Topics'),
    h('div', { class: 'toolbar' }, h('label', { for: 'topic-search' }, 'Search topics'), search),
    body,
    outbox.element,
  );
  async function refresh() {
    // The outbox reads PostgreSQL only, beside the topics' Redis reads; it reports its own failure.
    await Promise.all([refreshTopics(), outbox.refresh()]);
  }
  async function refreshTopics() {
    const offset = state.offset ?? 0;
    const page = await api.topics(state.search ?? '', offset, PAGE);
    newTrendTable();
    body.replaceChildren(
      page.total === 0
        ? h('p', { class: 'empty' }, state.search ? 'No topic matches.' : 'No topic yet.')
        : table(page.rows),
      pager({ offset, limit: PAGE, shown: page.rows.length, total: page.total }, (next) => rerender({ offset: next })),
    );
    // Not awaited: each trend is drawn into its row when it arrives.
    void refreshTrends(page.rows.filter((row) => !row.error).map((row) => row.topic));
  }
  return { view, refresh };
}

function table(rows) {
  const head = h(
    'tr',
    {},
    h('th', { scope: 'col' }, 'Topic'),
    COLUMNS.map((column) => h('th', { scope: 'col', class: 'num' }, label(column))),
    h('th', { scope: 'col', class: 'num' }, 'In'),
    h('th', { scope: 'col', class: 'num' }, 'Out'),
    h('th', { scope: 'col' }, 'Last hour'),
    h('th', { scope: 'col', class: 'num' }, 'Lag'),
    h('th', { scope: 'col' }, 'State'),
  );
  return scroller(
    'Topics',
    h(
      'table',
      { class: 'grid', id: 'topics-table' },
      h('caption', { class: 'visually-hidden' }, 'Registered topics with their message counts'),
      h('thead', {}, head),
      h('tbody', {}, rows.map(row)),
    ),
  );
}

function row(topic) {
  const link = h('a', { href: topicHref(topic.topic) }, topic.topic);
  if (topic.error) {
    return h(
      'tr',
      { 'data-topic': topic.topic },
      h('th', { scope: 'row' }, link),
      h('td', { colspan: COLUMNS.length + 5, class: 'error' }, topic.error.message),
    );
  }
  const rates = ratesOf(topic.topic, topic);
  return h(
    'tr',
    { 'data-topic': topic.topic },
    h('th', { scope: 'row' }, link),
    COLUMNS.map((column) =>
      h(
        'td',
        { class: `num ${column === 'dead' && topic.dead > 0 ? 'alert' : ''}`, 'data-count': column },
        count(gaugeOf(topic, column)),
      ),
    ),
    h('td', { class: 'num', 'data-rate': 'in', title: 'Messages pushed per second' }, rate(rates.in)),
    h('td', { class: 'num', 'data-rate': 'out', title: 'Messages acked per second' }, rate(rates.out)),
    trendCell(topic.topic),
    h('td', { class: 'num' }, topic.oldestReadyAgeMs < 0 ? '–' : duration(topic.oldestReadyAgeMs)),
    h(
      'td',
      {},
      topic.paused ? h('span', { class: 'badge paused' }, 'Paused') : h('span', { class: 'badge' }, 'Running'),
    ),
  );
}
