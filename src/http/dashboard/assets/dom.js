// Small helpers the views share: building elements (text only, never HTML strings, so a
// task name or an error text cannot inject markup) and formatting the records' fields.

/** `el('td', {className: 'num'}, 'text', child)`: an element with properties and children. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'dataset') {
      Object.assign(node.dataset, value);
    } else if (key.startsWith('aria') || key === 'role') {
      node.setAttribute(key.replace(/^aria([A-Z])/, (_, c) => `aria-${c.toLowerCase()}`), value);
    } else {
      node[key] = value;
    }
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** A serde `Duration` (`{secs, nanos}`) as `1.5 s`, `3 min 2 s`, `120 ms`. */
export function duration(value) {
  if (!value) return '';
  const ms = value.secs * 1000 + Math.round(value.nanos / 1e6);
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60000);
  return `${minutes} min ${Math.round((ms % 60000) / 1000)} s`;
}

/** A serde `SystemTime` (`{secs_since_epoch, nanos_since_epoch}`) as local `HH:MM:SS.mmm`. */
export function clock(value) {
  if (!value) return '';
  const date = new Date(value.secs_since_epoch * 1000 + Math.floor(value.nanos_since_epoch / 1e6));
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

const STATES = {
  WaitingForPermit: 'waiting_for_permit',
  Running: 'running',
  Backoff: 'backoff',
  Removing: 'removing',
  GroupRestarting: 'group_restarting',
  Paused: 'paused',
  Scheduled: 'scheduled',
};

/** A `TaskState` (`"Running"`) as its label (`running`). */
export function stateLabel(state) {
  return STATES[state] || String(state).toLowerCase();
}

/** A `PauseReason` (`"requested"`, `{"exhausted": {"last_error": …}}`) in words. */
export function pauseText(reason) {
  if (!reason) return '';
  if (reason === 'requested') return 'requested';
  if (reason.exhausted) return `out of retries: ${reason.exhausted.last_error}`;
  return JSON.stringify(reason);
}

/**
 * Brings `body`'s rows in line with `items`, keyed by `key(item)` (kept as `data-key`): a
 * row that stays is the same element, updated by `fill(row, item)` and moved only when out
 * of place, so focus (a keyboard user on a row's button) survives every redraw. New rows
 * come from `create(item)`; rows of items gone are removed; anything else in `body` (an
 * "empty" row) is removed too.
 */
export function reconcile(body, items, key, create, fill) {
  const old = new Map();
  for (const row of body.children) {
    if (row.dataset.key !== undefined) old.set(row.dataset.key, row);
  }
  let cursor = body.firstElementChild;
  for (const item of items) {
    const id = String(key(item));
    let row = old.get(id);
    if (row) {
      old.delete(id);
    } else {
      row = create(item);
      row.dataset.key = id;
    }
    fill(row, item);
    if (row === cursor) {
      cursor = cursor.nextElementSibling;
    } else {
      body.insertBefore(row, cursor);
    }
  }
  while (cursor) {
    const next = cursor.nextElementSibling;
    cursor.remove();
    cursor = next;
  }
  for (const row of old.values()) row.remove();
}

/** Sets `node`'s text only when it changed (no needless layout, no lost selection). */
export function text(node, value) {
  const wanted = String(value);
  if (node.textContent !== wanted) node.textContent = wanted;
}
