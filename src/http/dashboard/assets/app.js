// The dashboard's entry: reads what the server allows, draws the summary, tasks, slots and
// groups on a timer, follows the event stream into a bounded tail, opens a task's detail,
// and wires the token form and the control buttons. No data is in the page itself.

import { ApiError, getJson, seg, setToken, token } from './api.js';
import { Control } from './control.js';
import { clock, duration, el, pauseText, reconcile, stateLabel, text } from './dom.js';
import { follow } from './stream.js';
import { TaskTable } from './tasks.js';

/** Rows the live tail keeps (older ones leave the DOM). */
const TAIL_ROWS = 500;
/** Events a task's detail shows. */
const DETAIL_EVENTS = 50;
const FAST_MS = 2000;
const RATE_SECONDS = 10;
// Slots change state within seconds: a slower refresh left buttons on stale rows.
const SLOW_MS = 2000;

const $ = (selector) => document.querySelector(selector);

const view = {
  access: null,
  lastPublished: null,
  publishRate: 0,
  // Events the tail took per second, the last RATE_SECONDS seconds (a bounded ring).
  received: [],
  recent: [],
  lastEvent: null,
  detail: null,
  // The element that opened the detail, focused again when it closes.
  detailOpener: null,
  needToken: false,
};

const control = new Control($('#answer'), $('#confirm'), () => refresh(true));
const table = new TaskTable($('main'), openTask, readFailed);

function readFailed(error) {
  if (error instanceof ApiError && error.status === 401) {
    view.needToken = true;
    showAccess();
    return;
  }
  $('#connection').textContent = `read failed: ${error.message}`;
  // Everything drawn so far is from before the failure: say so until a read succeeds.
  document.body.dataset.stale = 'unreachable';
}

function showAccess() {
  const parts = [];
  if (view.needToken) {
    parts.push('This server needs a token to read: enter it above.');
  } else if (view.access) {
    parts.push(view.access.control ? 'Control is on.' : 'Read-only: control is off on this server.');
    if (view.access.control && !token()) parts.push('Enter the token to run commands.');
    if (token()) parts.push('A token is set for this tab (Forget clears it).');
    if (view.access.token_for_reads) parts.push('Reads need the token.');
  }
  $('#access').textContent = parts.join(' ');
  control.enable(Boolean(view.access?.control) && !view.needToken);
}

// The token: entered once per tab, kept in sessionStorage, never shown again.
$('#token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = $('#token-input');
  setToken(input.value.trim());
  input.value = '';
  view.needToken = false;
  control.say(token() ? 'token kept for this tab' : 'no token', 'info');
  stream.restart();
  refresh(true);
});
$('#token-forget').addEventListener('click', () => {
  setToken('');
  control.say('token forgotten', 'info');
  refresh(true);
});

$('#shutdown').addEventListener('click', (event) => control.run({ kind: 'shutdown' }, 'shutdown', event.currentTarget));

// The filter form: applied on submit (Enter) and when a select changes.
function applyFilter(event) {
  event?.preventDefault();
  table.filter({
    name: $('#filter-name').value.trim(),
    state: $('#filter-state').value,
    group: $('#filter-group').value.trim(),
    slot: $('#filter-slot').value.trim(),
    limit: Number($('#filter-limit').value),
  });
}
$('#task-filter').addEventListener('submit', applyFilter);
$('#filter-state').addEventListener('change', applyFilter);
$('#filter-limit').addEventListener('change', applyFilter);
$('#filter-clear').addEventListener('click', () => {
  $('#task-filter').reset();
  applyFilter();
});

// Summary: counts by state, the publish rate (from the supervisor's counter), drops.
async function summary() {
  let sup;
  try {
    sup = await getJson('api/supervisor');
  } catch (error) {
    readFailed(error);
    return;
  }
  view.needToken = false;
  view.access = sup.access;
  if (sup.running) {
    delete document.body.dataset.stale;
  } else {
    // The supervisor shut down: the tables keep their last values, marked as such.
    document.body.dataset.stale = 'stopped';
  }
  showAccess();
  $('#supervisor-name').textContent = sup.name;
  document.title = `taskvisor ${sup.name}`;
  const now = performance.now();
  if (view.lastPublished) {
    const seconds = (now - view.lastPublished.at) / 1000;
    if (seconds > 0) view.publishRate = Math.max(0, (sup.events.published - view.lastPublished.count) / seconds);
  }
  view.lastPublished = { at: now, count: sup.events.published };
  const counts = [['total', sup.tasks.total]];
  for (const [state, count] of Object.entries(sup.tasks.by_state)) {
    counts.push([state.replaceAll('_', ' '), count]);
  }
  counts.push(['groups', sup.tasks.groups]);
  drawPairs($('#counts'), counts, 'count');
  const subscriberDrops = sup.events.subscribers.reduce((sum, s) => sum + s.dropped, 0);
  const second = Math.floor(now / 1000);
  const recent = view.received.filter((bucket) => bucket.second >= second - RATE_SECONDS && bucket.second < second);
  drawPairs($('#rates'), [
    ['events/s', view.publishRate.toFixed(1)],
    ['tail events/s', (recent.reduce((sum, bucket) => sum + bucket.count, 0) / RATE_SECONDS).toFixed(1)],
    ['bus drops', sup.events.bus_dropped],
    ['subscriber drops', subscriberDrops],
    ['lagged streams', sup.http.lagged_disconnects],
    ['running', sup.running ? 'yes' : 'no'],
  ], 'rate');
}

function drawPairs(dl, pairs, prefix) {
  dl.replaceChildren(
    ...pairs.map(([name, value]) =>
      el('div', { dataset: { [prefix]: name.replaceAll(' ', '_') } }, el('dt', {}, name), el('dd', {}, String(value)))),
  );
}

async function slots() {
  const body = $('#slots tbody');
  let list;
  try {
    list = await getJson('api/slots');
  } catch (error) {
    if (error.kind === 'no_controller') {
      body.replaceChildren(emptyRow(6, 'this supervisor has no controller'));
      return;
    }
    readFailed(error);
    return;
  }
  if (list.length === 0) {
    body.replaceChildren(emptyRow(6, 'no slot in use'));
    return;
  }
  reconcile(
    body,
    list,
    (slot) => slot.slot,
    (slot) => el(
      'tr',
      { dataset: { slot: slot.slot } },
      el('td', {}, slot.slot),
      el('td'),
      el('td'),
      el('td', { className: 'num' }),
      el('td'),
      actions(['pause', 'resume', 'cancel'].map((a) => control.button({ kind: 'slots', name: slot.slot }, a))),
    ),
    (tr, slot) => {
      const [, status, owner, queue, paused] = tr.cells;
      text(status, slot.status);
      if (owner.dataset.owner !== String(slot.owner_id)) {
        owner.dataset.owner = String(slot.owner_id);
        owner.replaceChildren(slot.owner_id === null ? '' : taskLink(slot.owner_id));
      }
      text(queue, slot.queue_depth);
      text(paused, slot.paused ? 'yes' : '');
    },
  );

}

async function groups() {
  const body = $('#groups tbody');
  let list;
  try {
    list = await getJson('api/groups');
  } catch (error) {
    readFailed(error);
    return;
  }
  if (list.length === 0) {
    body.replaceChildren(emptyRow(5, 'no group registered'));
    return;
  }
  reconcile(
    body,
    list,
    (group) => group.name,
    (group) => el(
      'tr',
      { dataset: { group: group.name } },
      el('td', {}, group.name),
      el('td'),
      el('td'),
      el('td'),
      actions(['pause', 'resume', 'restart', 'cancel', 'remove'].map((a) => control.button({ kind: 'groups', name: group.name }, a))),
    ),
    (tr, group) => {
      const [, strategy, members, restarting] = tr.cells;
      text(strategy, group.strategy);
      const ids = group.members.join(' ');
      if (members.dataset.members !== ids) {
        members.dataset.members = ids;
        members.replaceChildren(...group.members.flatMap((id, i) => (i ? [' ', taskLink(id)] : [taskLink(id)])));
      }
      text(restarting, group.restarting ? 'yes' : '');
    },
  );

}

function actions(buttons) {
  const cell = el('td', { className: 'actions' }, ...buttons);
  cell.dataset.control = '';
  cell.hidden = !control.enabled;
  return cell;
}

function emptyRow(columns, text) {
  const cell = el('td', { className: 'muted' }, text);
  cell.colSpan = columns;
  return el('tr', {}, cell);
}

function taskLink(id) {
  const button = el('button', { type: 'button', className: 'link' }, `#${id}`);
  button.addEventListener('click', () => openTask({ id }));
  return button;
}

// A task's detail: its TaskInfo (and owning slot), its actions, its recent events.
async function openTask(task) {
  // Where the operator came from: closing the detail returns there.
  view.detailOpener = document.activeElement;
  view.detail = { id: task.id, name: task.name };
  $('#detail').hidden = false;
  await drawDetail();
  $('#detail-heading').focus();
}

async function drawDetail() {
  const open = view.detail;
  if (!open) return;
  let info;
  try {
    info = await getJson(`api/tasks/${seg(open.id)}`);
  } catch (error) {
    if (error.status === 404) {
      $('#detail-info').replaceChildren(el('div', {}, el('dt', {}, 'state'), el('dd', { dataset: { field: 'state' } }, 'gone (no longer registered)')));
      return;
    }
    readFailed(error);
    return;
  }
  if (view.detail !== open) return;
  open.name = info.name;
  $('#detail-heading').textContent = `Task ${info.name} (#${info.id})`;
  const fields = [
    ['id', info.id],
    ['name', info.name],
    ['state', stateLabel(info.state)],
    ['attempt', info.attempt],
    ['restarts', info.restarts],
    ['next run in', info.next_run_in ? duration(info.next_run_in) : '—'],
    ['group', info.group || '—'],
    ['slot', info.slot || '—'],
    ['paused because', pauseText(info.pause_reason) || '—'],
    ['last failure', info.last_failure || '—'],
    ['undelivered', info.undelivered],
  ];
  $('#detail-info').replaceChildren(
    ...fields.map(([name, value]) => el('div', {}, el('dt', {}, name), el('dd', { dataset: { field: name.replaceAll(' ', '_') } }, String(value)))),
  );
  // The buttons are made once per opened task: a redraw never takes a keyboard user's focus.
  const box = $('#detail-actions');
  if (box.dataset.task !== String(info.id)) {
    box.dataset.task = String(info.id);
    // By id: a name reused after a removal is another task.
    const what = { kind: 'tasks', name: String(info.id), label: `${info.name} (#${info.id})` };
    box.replaceChildren(...['pause', 'resume', 'restart', 'cancel', 'remove'].map((a) => control.button(what, a)));
  }
  box.hidden = !control.enabled;
  drawDetailEvents();
}

function drawDetailEvents() {
  const open = view.detail;
  if (!open?.name) return;
  const mine = view.recent.filter((item) => item.event.task === open.name).slice(-DETAIL_EVENTS);
  $('#detail-events').replaceChildren(...mine.reverse().map(eventRow));
  if (mine.length === 0) $('#detail-events').replaceChildren(el('li', { className: 'muted' }, 'no event of it in the tail yet'));
}

function closeDetail() {
  view.detail = null;
  $('#detail').hidden = true;
  // Back to the row (or link) that opened it, if it is still on the page.
  const opener = view.detailOpener;
  view.detailOpener = null;
  if (opener?.isConnected) opener.focus();
  else $('#tasks-heading').focus();
}

$('#detail-close').addEventListener('click', closeDetail);
// Escape closes the detail (the confirmation dialog handles its own Escape first).
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && view.detail && !$('#confirm').open) closeDetail();
});

// The tail: newest on top, at most TAIL_ROWS rows, markers for gap/restarted/lagged/closed.
function eventRow(item) {
  const event = item.event;
  const text = [event.reason, event.outcome_kind && `outcome ${event.outcome_kind}`, event.delay_ms != null && `delay ${event.delay_ms} ms`]
    .filter(Boolean)
    .join(' · ');
  return el(
    'li',
    { dataset: { seq: String(item.seq), epoch: String(item.epoch), kind: event.kind } },
    el('span', { className: 'seq' }, `${item.seq}`),
    el('time', {}, clock(event.at)),
    el('span', { className: `kind kind-${event.kind}` }, event.kind),
    el('span', { className: 'task' }, event.task || ''),
    event.attempt ? el('span', { className: 'muted' }, `attempt ${event.attempt}`) : null,
    el('span', { className: 'text' }, text),
  );
}

function onEvent(item) {
  if (!item || item.seq === undefined) return;
  // At most once per (epoch, seq): a resumed stream starts after the last id seen.
  const last = view.lastEvent;
  if (last && last.epoch === item.epoch && item.seq <= last.seq) return;
  view.lastEvent = { epoch: item.epoch, seq: item.seq };
  countReceived();
  view.recent.push(item);
  if (view.recent.length > TAIL_ROWS) view.recent.splice(0, view.recent.length - TAIL_ROWS);
  prepend(eventRow(item));
  if (view.detail?.name && item.event.task === view.detail.name) drawDetailEvents();
}

function countReceived() {
  const second = Math.floor(performance.now() / 1000);
  const last = view.received[view.received.length - 1];
  if (last && last.second === second) {
    last.count += 1;
    return;
  }
  view.received.push({ second, count: 1 });
  if (view.received.length > RATE_SECONDS + 1) view.received.shift();
}

const MARKERS = {
  gap: (d) => `gap: events ${d.from}–${d.to} are no longer in the server's buffer`,
  restarted: (d) => `restarted: a new run of the supervisor (epoch ${d.epoch}); its events from before this page reconnected are shown only as far as its buffer holds them`,
  lagged: () => 'lagged: this page fell behind; resuming from the last event seen',
  closed: () => 'closed: the supervisor shut down',
  dropped: () => 'the connection dropped; resuming from the last event seen',
};

function onMarker(kind, detail) {
  if (kind === 'restarted') view.lastEvent = null;
  const text = (MARKERS[kind] || (() => kind))(detail);
  prepend(el('li', { className: `marker marker-${kind}`, dataset: { marker: kind } }, text));
}

function prepend(row) {
  const tail = $('#tail');
  tail.prepend(row);
  while (tail.childElementCount > TAIL_ROWS) tail.lastElementChild.remove();
  $('#tail-count').textContent = `(last ${tail.childElementCount} shown)`;
}

const stream = follow({
  event: onEvent,
  marker: onMarker,
  state: (text) => {
    $('#connection').textContent = `events: ${text}`;
    $('#connection').dataset.state = text === 'live' ? 'live' : 'down';
  },
  unauthorized: () => {
    view.needToken = true;
    showAccess();
  },
});

let fastTimer = null;
let slowTimer = null;

async function refresh(all) {
  if (document.hidden && !all) return;
  await summary();
  if (view.needToken) return;
  await Promise.all([table.load(), drawDetail(), all ? slots() : null, all ? groups() : null]);
}

function start() {
  refresh(true);
  fastTimer = setInterval(() => refresh(false), FAST_MS);
  slowTimer = setInterval(() => {
    if (!document.hidden && !view.needToken) {
      slots();
      groups();
    }
  }, SLOW_MS);
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refresh(true);
});
window.addEventListener('pagehide', () => {
  clearInterval(fastTimer);
  clearInterval(slowTimer);
  stream.stop();
});

start();
