// The bulk actions a topic's view follows, with where each stands and an Abort button while it
// runs. The page remembers the ids it started (or was given) in this browser's storage, per
// dashboard and topic: the service answers a bulk action's status by id.
import { api, settings } from './api.js';
import { count, h, scroller, time } from './dom.js';
import { act, announce } from './feedback.js';

/** The most bulk actions a topic's view follows (the newest). */
const FOLLOWED = 10;

const storageKey = (topic) => `ackq-bulks:${settings.base}:${topic}`;

/** The ids of the bulk actions followed on a topic, newest first. */
function followed(topic) {
  try {
    const ids = JSON.parse(localStorage.getItem(storageKey(topic)) ?? '[]');
    return Array.isArray(ids) ? ids.filter((id) => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

function save(topic, ids) {
  try {
    localStorage.setItem(storageKey(topic), JSON.stringify(ids.slice(0, FOLLOWED)));
  } catch {
    // Storage refused (private mode, quota): the view follows nothing more; the action still ran.
  }
}

/** Follows a bulk action on its topic's view. */
export function followBulk(topic, id) {
  save(topic, [id, ...followed(topic).filter((known) => known !== id)]);
}

const forget = (topic, id) =>
  save(
    topic,
    followed(topic).filter((known) => known !== id),
  );

/** A form to follow a bulk action by id (one started from the CLI or another browser). */
export function followForm(topic, changed) {
  const input = h('input', {
    id: 'bulk-follow-id',
    type: 'search',
    autocomplete: 'off',
    placeholder: 'Bulk action id',
  });
  async function follow(event) {
    event.preventDefault();
    const id = input.value.trim();
    if (!id) return;
    try {
      const status = await api.bulkStatus(id);
      followBulk(status.topic, id);
      input.value = '';
      announce(status.topic === topic ? `Following bulk action ${id}.` : `Bulk action ${id} acts on ${status.topic}.`);
      changed();
    } catch (error) {
      announce(`Failed: ${error.message}`, true);
    }
  }
  return h(
    'form',
    { class: 'toolbar', onsubmit: follow },
    h('label', { for: 'bulk-follow-id' }, 'Follow a bulk action by id'),
    input,
    h('button', { type: 'submit' }, 'Follow'),
  );
}

/** The followed bulk actions of a topic as a table, read now; one whose record is gone is forgotten. */
export async function bulkStatusTable(topic, changed) {
  const ids = followed(topic);
  const answers = await Promise.all(
    ids.map((id) =>
      api.bulkStatus(id).then(
        (status) => ({ id, status }),
        (error) => ({ id, error }),
      ),
    ),
  );
  const shown = answers.filter(({ id, error }) => {
    if (error?.status !== 404) return true;
    forget(topic, id);
    return false;
  });
  if (shown.length === 0) return h('p', { class: 'empty' }, 'No bulk action followed on this topic.');
  const head = h(
    'tr',
    {},
    ['Id', 'Action', 'State', 'Progress', 'Started'].map((c) => h('th', { scope: 'col' }, c)),
    settings.readOnly ? '' : h('th', { scope: 'col' }, 'Abort'),
  );
  const rows = shown.map(({ id, status, error }) =>
    status
      ? h(
          'tr',
          { 'data-bulk': id },
          h('th', { scope: 'row' }, id),
          h('td', {}, status.action),
          h('td', {}, h('span', { class: `state state-bulk-${status.state}` }, status.state)),
          h('td', {}, progress(status)),
          h('td', {}, time(status.createdAt)),
          settings.readOnly ? '' : h('td', {}, status.state === 'running' ? abortButton(id, changed) : '–'),
        )
      : h(
          'tr',
          { 'data-bulk': id },
          h('th', { scope: 'row' }, id),
          h('td', { colspan: settings.readOnly ? 4 : 5, class: 'error' }, `Could not read: ${error.message}`),
        ),
  );
  return scroller(
    'Bulk actions',
    h('table', { class: 'grid', id: 'bulk-table' }, h('thead', {}, head), h('tbody', {}, rows)),
  );
}

/** `processed of selected` with a bar, and how many were passed over (no longer in the state selected). */
function progress({ processed, selected, skipped }) {
  return h(
    'span',
    { class: 'bulk-progress' },
    h('progress', { max: Math.max(selected, 1), value: processed, 'aria-hidden': 'true' }),
    ` ${count(processed)} of ${count(selected)}`,
    skipped > 0 ? ` (${count(skipped)} skipped)` : '',
  );
}

function abortButton(id, changed) {
  return h(
    'button',
    {
      type: 'button',
      class: 'danger',
      'aria-label': `Abort bulk action ${id}`,
      onclick: () =>
        act(
          `Abort bulk action ${id}? What it did stays done; it acts on no more messages.`,
          'Abort',
          () => api.abortBulk(id),
          (r) => (r.aborted ? `Aborted bulk action ${id}.` : `Bulk action ${id} was no longer running.`),
        ).then(changed),
    },
    'Abort',
  );
}
