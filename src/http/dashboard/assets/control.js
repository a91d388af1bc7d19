// The control buttons: shown only when the server runs commands; every command that ends
// or interrupts work asks first in a modal dialog that says what it does (keyboard: Tab between its buttons, Escape cancels);
// each command is sent once and the server's answer (or its error kind and message) is
// announced in the answer region. Nothing is ever retried on its own.

import { command, seg } from './api.js';
import { el } from './dom.js';

/** Which actions end or interrupt work (and so ask first). */
const ENDS_WORK = new Set(['cancel', 'remove', 'restart', 'shutdown']);

/** What each asking action does, said in its confirmation. */
const CONSEQUENCE = {
  cancel: 'Its work is stopped and it ends with the outcome "canceled"; it is not restarted and leaves the list.',
  remove: 'Its work is stopped and it is removed from the supervisor; it is not restarted.',
  restart: 'A running attempt is stopped now and a new one starts (a task waiting in backoff starts at once).',
  shutdown: 'Every task is stopped within the grace period and the supervisor ends; this page stays read-only.',
};

/** The answer's reply in words: `{"pause":true}` is "done", `false` "nothing to change". */
function replyText(reply) {
  if (reply === undefined || reply === null) return 'done';
  if (typeof reply === 'string') return reply;
  const values = Object.values(reply);
  if (values.length === 1) {
    const value = values[0];
    if (value === true) return 'done';
    if (value === false) return 'nothing to change (already so, or no longer there)';
    if (value && typeof value === 'object' && 'changed' in value) {
      return `changed ${value.changed}, unchanged ${value.unchanged ?? 0}`;
    }
  }
  return JSON.stringify(reply);
}

export class Control {
  /** `answer`: the live region; `dialog`: the confirmation; `after(result)`: redraw. */
  constructor(answer, dialog, after) {
    this.answer = answer;
    this.dialog = dialog;
    this.text = dialog.querySelector('#confirm-text');
    this.ok = dialog.querySelector('#confirm-ok');
    this.cancel = dialog.querySelector('#confirm-cancel');
    this.after = after;
    this.enabled = false;
    this.pending = null;
    this.ok.addEventListener('click', () => this.close(true));
    this.cancel.addEventListener('click', () => this.close(false));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      this.close(false);
    });
  }

  /** Shows or hides every `[data-control]` element. */
  enable(on) {
    this.enabled = on;
    for (const node of document.querySelectorAll('[data-control]')) {
      node.hidden = !on;
    }
  }

  /**
   * A button running `action` on `what` (`{kind: 'tasks'|'slots'|'groups', name, label?}`:
   * `name` goes in the path, `label`, when given, in the messages).
   */
  button(what, action, label = action) {
    const button = el('button', { type: 'button', className: ENDS_WORK.has(action) ? 'danger' : '' }, label);
    button.dataset.action = action;
    button.addEventListener('click', () => this.run(what, action, button));
    return button;
  }

  /** Resolves true when the operator confirms; `verb` labels the confirming button. */
  confirm(message, verb) {
    return new Promise((resolve) => {
      this.pending = resolve;
      this.text.textContent = message;
      this.ok.textContent = verb;
      this.returnFocus = document.activeElement;
      this.dialog.showModal();
      this.cancel.focus();
    });
  }

  close(confirmed) {
    if (this.dialog.open) this.dialog.close();
    const resolve = this.pending;
    this.pending = null;
    this.returnFocus?.focus?.();
    resolve?.(confirmed);
  }

  async run(what, action, button) {
    const path = what.kind === 'shutdown'
      ? 'api/shutdown'
      : `api/${what.kind}/${seg(what.name)}/${action}`;
    const subject = what.kind === 'shutdown' ? 'the supervisor' : `${what.kind.slice(0, -1)} ${what.label || what.name}`;
    if (ENDS_WORK.has(action)) {
      const verb = action === 'shutdown' ? 'Shut down' : `${action[0].toUpperCase()}${action.slice(1)} ${what.kind.slice(0, -1)}`;
      const sure = await this.confirm(`${verb} ${subject.replace(/^\S+ /, '')}? ${CONSEQUENCE[action]}`, verb);
      if (!sure) {
        this.say(`${action} ${subject}: not sent`, 'info');
        return;
      }
    }
    if (button) button.disabled = true;
    this.say(`${action} ${subject}: sending…`, 'info');
    const result = await command(path);
    if (button) button.disabled = false;
    if (result.ok) {
      const reply = result.body ? result.body.reply : undefined;
      this.say(`${action} ${subject}: ok, ${replyText(reply)}`, 'ok');
    } else {
      this.say(`${action} ${subject}: refused ${result.status || ''} ${result.kind}: ${result.message}`, 'error');
    }
    this.after(result);
  }

  say(text, tone) {
    this.answer.textContent = text;
    this.answer.dataset.tone = tone;
  }
}
