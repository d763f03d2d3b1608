// Confirmations (a modal <dialog>: focus stays in it, Escape keeps things as they are) and the
// status line that screen readers announce.
import { h } from './dom.js';

const confirmDialog = document.getElementById('confirm');
let statusTimer;

/** Asks before a change; resolves true only when the operator confirms. */
export function confirmAction(text, confirmLabel) {
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = confirmLabel;
  confirmDialog.returnValue = 'cancel';
  confirmDialog.showModal();
  return new Promise((resolve) => {
    confirmDialog.addEventListener('close', () => resolve(confirmDialog.returnValue === 'confirm'), { once: true });
  });
}

/** Announces what an action did (or why it failed). */
export function announce(text, failed = false) {
  const status = document.getElementById('status');
  status.replaceChildren(h('span', { class: failed ? 'error' : 'ok' }, text));
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => status.replaceChildren(), 8000);
}

/** Runs an action after confirming it; announces the outcome; answers whether it ran. */
export async function act(question, confirmLabel, work, describe) {
  if (question && !(await confirmAction(question, confirmLabel))) return false;
  try {
    announce(describe(await work()));
    return true;
  } catch (error) {
    announce(`Failed: ${error.message}`, true);
    return false;
  }
}

/** Whether a dialog is open: the page does not refresh under it. */
export const dialogOpen = () => document.querySelector('dialog[open]') !== null;
