// A bulk action on a topic: the operator picks an action and a filter; the page counts what it
// selects and shows that count in the confirmation, and only a confirmed action is started. It
// then runs in the background (bulk-status.js follows it).
import { api } from './api.js';
import { count, h, label } from './dom.js';
import { act, announce } from './feedback.js';
import { followBulk } from './bulk-status.js';

/** The states each action may select (the service refuses the others). */
const STATES_OF = {
  requeue: ['dead'],
  cancel: ['ready', 'delayed', 'leased', 'waiting-children', 'dead', 'completed'],
  purge: ['dead', 'completed'],
  replay: ['dead', 'completed'],
};

/** What the confirmation says each action does, and its button. */
const ACTIONS = {
  requeue: { verb: 'Requeue', effect: 'They go back to ready with their attempts reset.' },
  cancel: { verb: 'Cancel', effect: 'They are removed for good; a running handler is told to stop.' },
  purge: { verb: 'Purge', effect: 'They are deleted for good. This cannot be undone.' },
  replay: { verb: 'Replay', effect: 'A copy of each is pushed with a new id; the originals stay.' },
};

const plural = (n, word) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

/** A labelled control in the form's grid. */
const field = (id, text, control) => h('div', { class: 'bulk-field' }, h('label', { for: id }, text), control);

/** The Bulk action section of a topic's view; `changed` runs once one started. */
export function bulkForm(topic, changed) {
  const action = h(
    'select',
    { id: 'bulk-action', onchange: () => fillStates() },
    Object.keys(ACTIONS).map((name) => h('option', { value: name }, label(name))),
  );
  const state = h('select', { id: 'bulk-state' });
  const tag = h('input', { id: 'bulk-tag', type: 'text', autocomplete: 'off', maxlength: 128 });
  const from = h('input', { id: 'bulk-from', type: 'datetime-local', step: 1 });
  const to = h('input', { id: 'bulk-to', type: 'datetime-local', step: 1 });
  const error = h('input', { id: 'bulk-error', type: 'text', autocomplete: 'off', maxlength: 1024 });
  const rate = h('input', { id: 'bulk-rate', type: 'number', min: 1, max: 1_000_000, step: 1, placeholder: '50000' });
  function fillStates() {
    const kept = state.value;
    const states = STATES_OF[action.value];
    state.replaceChildren(...states.map((name) => h('option', { value: name }, label(name))));
    state.value = states.includes(kept) ? kept : states.includes('dead') ? 'dead' : states[0];
  }
  fillStates();

  /** The form as the API takes it: empty fields left out, times as epoch ms (the viewer's zone). */
  function request() {
    const ms = (input) => (input.value ? new Date(input.value).getTime() : undefined);
    const bulk = {
      action: action.value,
      state: state.value,
      tag: tag.value || undefined,
      from: ms(from),
      to: ms(to),
      errorContains: error.value || undefined,
      maxPerSecond: rate.value ? Number(rate.value) : undefined,
    };
    return Object.fromEntries(Object.entries(bulk).filter(([, value]) => value !== undefined));
  }

  async function review(event) {
    event.preventDefault();
    const bulk = request();
    let selected;
    try {
      ({ selected } = await api.bulkCount(topic, bulk));
    } catch (failure) {
      announce(`Failed: ${failure.message}`, true);
      return;
    }
    if (selected === 0) {
      announce(`No ${bulk.state} message of ${topic} matches: nothing to do.`);
      return;
    }
    const { verb, effect } = ACTIONS[bulk.action];
    const started = await act(
      `${verb} ${plural(selected, `${bulk.state} message`)} of ${topic}${describe(bulk)}? ${effect} ` +
        'It runs in the background; messages that match later are left alone.',
      `${verb} ${count(selected)}`,
      async () => {
        const answer = await api.bulk(topic, bulk);
        followBulk(topic, answer.id);
        return answer;
      },
      (answer) => `Started bulk action ${answer.id}: ${plural(answer.selected, 'message')} selected.`,
    );
    if (started) changed();
  }

  return h(
    'form',
    { id: 'bulk-form', class: 'bulk-form', onsubmit: review, 'aria-label': 'Bulk action' },
    h(
      'div',
      { class: 'bulk-fields' },
      field('bulk-action', 'Action', action),
      field('bulk-state', 'State', state),
      field('bulk-tag', 'Tag', tag),
      field('bulk-from', 'Pushed from', from),
      field('bulk-to', 'Pushed to', to),
      field('bulk-error', 'Error contains', error),
      field('bulk-rate', 'Most per second', rate),
    ),
    h('button', { type: 'submit', id: 'bulk-review' }, 'Count and confirm…'),
  );
}

/** The filter as the confirmation says it. */
function describe(bulk) {
  const parts = [];
  if (bulk.tag !== undefined) parts.push(`tagged "${bulk.tag}"`);
  if (bulk.from !== undefined) parts.push(`pushed from ${new Date(bulk.from).toLocaleString()}`);
  if (bulk.to !== undefined) parts.push(`pushed until ${new Date(bulk.to).toLocaleString()}`);
  if (bulk.errorContains !== undefined) parts.push(`whose error contains "${bulk.errorContains}"`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}
