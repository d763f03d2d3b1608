// One message's details in a modal dialog: its fields, its place in a flow (parent, children,
// tree), headers, payload and durable steps (shown only to those the dashboard's guard lets in),
// with the actions that fit its state. Opened from a row, or by an address that names the message
// (routes.js): closing it then puts the address back on the topic.
import { api, settings } from './api.js';
import { duration, h, json, time } from './dom.js';
import { act } from './feedback.js';
import { waitsForKey } from './key-mode.js';
import { startBy } from './start-by.js';
import { childrenSection, flowSection, parentSection } from './flow-detail.js';
import { messageHref, routeOf, topicHref } from './routes.js';
import { sealedText, withheld } from './sealed.js';

/** The longest step result shown in the details (characters of its JSON); the rest is cut. */
const STEP_SHOWN = 200;

const dialog = document.getElementById('detail');
const title = document.getElementById('detail-title');
/** The message the dialog shows: `{ topic, id }`. */
let shown;
// Closed by the operator (Close, Escape), not by the page: the address follows.
let closedByUser = false;
document.getElementById('detail-close').addEventListener('click', () => {
  closedByUser = true;
  dialog.close();
});
dialog.addEventListener('cancel', () => (closedByUser = true));
dialog.addEventListener('close', () => {
  if (closedByUser) syncAddress();
  closedByUser = false;
});

/**
 * Keeps an address that names a message on what is shown: the message in the dialog, or (the
 * dialog closed, or the message not found) the topic the address names.
 */
export function syncAddress() {
  const route = routeOf(location.hash);
  if (route.message === undefined) return;
  const href = dialog.open && shown ? messageHref(shown.topic, shown.id) : topicHref(route.topic);
  if (location.hash !== href) history.replaceState(null, '', href);
}

/** Closes the details, when open (the page moves elsewhere). */
export function closeMessage() {
  if (dialog.open) dialog.close();
}

/** Shows a message; `changed` runs after an action changed it. */
export function showMessage(topic, message, changed) {
  const replacing = dialog.open;
  shown = { topic, id: message.id };
  title.textContent = `Message ${message.id}`;
  const fields = [
    ['State', message.state],
    ['Attempt', message.state === 'dead' ? String(message.attempt) : `${message.attempt} of ${message.maxAttempts}`],
    ['Enqueued', time(message.enqueuedAt)],
    message.group !== undefined && ['Group', message.group],
    message.tags !== undefined && ['Tags', message.tags.join(', ')],
    message.key !== undefined && ['Key', message.key],
    message.mode !== undefined && ['Mode', message.mode],
    message.priority !== undefined && ['Priority', String(message.priority)],
    message.startBy !== undefined && ['Start by', startBy(message)],
    message.dueAt !== undefined && ['Due', time(message.dueAt)],
    waitsForKey(message) && ['Due', 'when the running message of its key ends'],
    message.leaseDeadline !== undefined && ['Lease until', time(message.leaseDeadline)],
    message.deadAt !== undefined && ['Died', time(message.deadAt)],
    message.reason !== undefined && ['Reason', message.reason],
    message.error !== undefined && ['Error', message.error ?? '–'],
    message.completedAt !== undefined && ['Completed', time(message.completedAt)],
    message.durationMs !== undefined && ['Handler ran', duration(message.durationMs)],
  ].filter(Boolean);
  const close = async (done) => {
    if (await done) {
      dialog.close();
      changed();
    }
  };
  const actions = settings.readOnly
    ? []
    : [
        message.state === 'dead' &&
          h('button', { type: 'button', onclick: () => close(requeue(topic, [message.id])) }, 'Requeue'),
        message.state === 'dead' &&
          h('button', { type: 'button', class: 'danger', onclick: () => close(purge(topic, [message.id])) }, 'Purge'),
        message.state !== 'dead' &&
          message.state !== 'completed' &&
          h(
            'button',
            { type: 'button', class: 'danger', onclick: () => close(cancel(topic, message.id)) },
            'Cancel message',
          ),
      ];
  document.getElementById('detail-body').replaceChildren(
    h(
      'dl',
      { class: 'fields' },
      fields.map(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]),
    ),
    // Where the message stands among others: each section is empty when it does not apply.
    parentSection(message),
    childrenSection(message),
    flowSection(topic, message),
    h('h3', {}, 'Headers'),
    h(
      'pre',
      { class: 'code', tabindex: 0 },
      shownValue(message, 'headers', withheld(message, 'payload', message.sealed)),
    ),
    h('h3', {}, message.state === 'completed' ? 'Result' : 'Payload'),
    h(
      'pre',
      { class: 'code', tabindex: 0, id: 'detail-payload' },
      message.state === 'completed'
        ? shownValue(message, 'result', withheld(message, 'result', message.sealedResult))
        : shownValue(message, 'payload', withheld(message, 'payload', message.sealed)),
    ),
    ...(message.steps
      ? [
          h('h3', {}, `Steps (${message.steps.length})`),
          h(
            'dl',
            { class: 'fields steps' },
            message.steps.map((step) => [h('dt', {}, step.name), h('dd', {}, h('code', {}, shortJson(step)))]),
          ),
        ]
      : []),
    h('div', { class: 'actions' }, actions),
  );
  if (!replacing) dialog.showModal();
  // Another message in the open dialog (a link followed): the focus goes to its title, not lost.
  else title.focus();
}

/** A field as JSON, or what a codec sealed in its place (size, key id) when the server withheld it. */
function shownValue(message, field, sealed) {
  return sealed ? sealedText(sealed) : json(message[field]);
}

/** A step's result as one line of JSON, cut at STEP_SHOWN characters; `undefined` when it returned nothing. */
function shortJson(step) {
  if (!('value' in step)) return 'undefined';
  const text = JSON.stringify(step.value);
  return text.length > STEP_SHOWN ? `${text.slice(0, STEP_SHOWN)}… (${text.length} characters)` : text;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function requeue(topic, ids, total) {
  const what = ids ? plural(ids.length, 'dead letter') : `all ${plural(total, 'dead letter')}`;
  return act(
    `Requeue ${what} of ${topic}? They go back to ready with their attempts reset.`,
    'Requeue',
    () => api.sweepDead(topic, 'requeue', ids),
    (r) => `Requeued ${plural(r.requeued, 'dead letter')}.`,
  );
}

export function purge(topic, ids, total) {
  const what = ids ? plural(ids.length, 'dead letter') : `all ${plural(total, 'dead letter')}`;
  return act(
    `Delete ${what} of ${topic} for good? This cannot be undone.`,
    'Purge',
    () => api.sweepDead(topic, 'purge', ids),
    (r) => `Purged ${plural(r.purged, 'dead letter')}.`,
  );
}

export function cancel(topic, id) {
  return act(
    `Cancel message ${id} of ${topic}? It is removed for good; a running handler is told to stop.`,
    'Cancel message',
    () => api.cancel(topic, id),
    (r) => `Cancelled ${id} (was ${r.cancelled}).`,
  );
}
