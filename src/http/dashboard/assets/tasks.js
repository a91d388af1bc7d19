// The task table: filter, sort and search are the server's (`GET /api/tasks` with `sort`,
// `order`, `name_contains`, `offset`): the browser never holds more than one page, however
// many tasks are registered. The table is redrawn on a timer and after each change.

import { getJson } from './api.js';
import { duration, el, pauseText, reconcile, stateLabel, text } from './dom.js';

const COLUMNS = 9;

export class TaskTable {
  /**
   * `root`: the section; `onOpen(task)`: a task's name was chosen;
   * `onError(error)`: a read failed (401 asks for the token).
   */
  constructor(root, onOpen, onError) {
    this.body = root.querySelector('#tasks tbody');
    this.headers = [...root.querySelectorAll('#tasks th[data-sort]')];
    this.info = root.querySelector('#page-info');
    this.timing = root.querySelector('#page-timing');
    this.count = root.querySelector('#tasks-count');
    this.prev = root.querySelector('#page-prev');
    this.next = root.querySelector('#page-next');
    this.onOpen = onOpen;
    this.onError = onError;
    this.query = { name: '', state: '', group: '', slot: '', limit: 50 };
    this.sort = 'id';
    this.order = 'asc';
    this.offset = 0;
    this.matched = 0;
    this.loading = null;
    this.lastTiming = null;

    for (const th of this.headers) {
      th.querySelector('button').addEventListener('click', () => this.sortBy(th.dataset.sort));
    }
    this.prev.addEventListener('click', () => this.page(-1));
    this.next.addEventListener('click', () => this.page(1));
    this.markSort();
  }

  /** New filter values (the form's): back to the first page. */
  filter(query) {
    this.query = { ...this.query, ...query };
    this.offset = 0;
    return this.load();
  }

  sortBy(key) {
    if (this.sort === key) {
      this.order = this.order === 'asc' ? 'desc' : 'asc';
    } else {
      this.sort = key;
      this.order = 'asc';
    }
    this.offset = 0;
    this.markSort();
    return this.load();
  }

  page(step) {
    const limit = this.query.limit;
    const offset = Math.max(0, this.offset + step * limit);
    if (offset >= this.matched && step > 0) return undefined;
    this.offset = offset;
    return this.load();
  }

  markSort() {
    for (const th of this.headers) {
      if (th.dataset.sort === this.sort) {
        th.setAttribute('aria-sort', this.order === 'asc' ? 'ascending' : 'descending');
      } else {
        th.removeAttribute('aria-sort');
      }
    }
  }

  url() {
    const params = new URLSearchParams();
    const { name, state, group, slot, limit } = this.query;
    if (name) params.set('name_contains', name);
    if (state) params.set('state', state);
    if (group) params.set('group', group);
    if (slot) params.set('slot', slot);
    params.set('sort', this.sort);
    params.set('order', this.order);
    params.set('offset', String(this.offset));
    params.set('limit', String(limit));
    return `api/tasks?${params}`;
  }

  /** Fetches and draws the current page; an older request still running is aborted. */
  async load() {
    this.loading?.abort();
    const controller = new AbortController();
    this.loading = controller;
    const asked = performance.now();
    let page;
    try {
      page = await getJson(this.url(), controller.signal);
    } catch (error) {
      if (error.name === 'AbortError') return;
      this.onError(error);
      return;
    } finally {
      if (this.loading === controller) this.loading = null;
    }
    const answered = performance.now();
    this.draw(page);
    const drawn = performance.now();
    this.lastTiming = {
      answerMs: Math.round(answered - asked),
      drawMs: Math.round(drawn - answered),
      rows: page.tasks.length,
      matched: page.matched,
    };
    this.timing.textContent = `answer ${this.lastTiming.answerMs} ms, drawn in ${this.lastTiming.drawMs} ms`;
    document.body.dataset.tasksTiming = JSON.stringify(this.lastTiming);
    console.debug('taskvisor: task page', this.lastTiming);
  }

  draw(page) {
    this.matched = page.matched;
    if (page.tasks.length === 0) {
      const cell = el('td', { className: 'muted' }, page.matched ? 'no tasks on this page' : 'no task matches');
      cell.colSpan = COLUMNS;
      this.body.replaceChildren(el('tr', {}, cell));
    } else {
      reconcile(this.body, page.tasks, (task) => task.id, (task) => this.row(task), (tr, task) => this.fill(tr, task));
    }
    const first = page.tasks.length ? this.offset + 1 : 0;
    const last = this.offset + page.tasks.length;
    text(this.info, `${first}–${last} of ${page.matched}`);
    text(this.count, `(${page.matched} matching)`);
    this.prev.disabled = this.offset === 0;
    this.next.disabled = last >= page.matched;
  }

  /** A new row for `task` (its cells are filled by `fill`). */
  row(task) {
    const open = el('button', { type: 'button', className: 'link' });
    open.addEventListener('click', () => this.onOpen({ id: Number(tr.dataset.id), name: tr.dataset.name }));
    const tr = el(
      'tr',
      {},
      el('td', { className: 'num' }),
      el('td', {}, open),
      el('td', {}, el('span')),
      el('td', { className: 'num' }),
      el('td', { className: 'num' }),
      el('td', { className: 'num' }),
      el('td'),
      el('td'),
      el('td', { className: 'failure' }),
    );
    tr.dataset.id = String(task.id);
    return tr;
  }

  fill(tr, task) {
    const state = stateLabel(task.state);
    tr.dataset.name = task.name;
    tr.dataset.state = state;
    const [id, name, stateCell, attempt, restarts, next, group, paused, failure] = tr.cells;
    text(id, task.id);
    text(name.firstElementChild, task.name);
    const badge = stateCell.firstElementChild;
    badge.className = `state state-${state}`;
    text(badge, state.replaceAll('_', ' '));
    text(attempt, task.attempt);
    text(restarts, task.restarts);
    text(next, task.next_run_in ? duration(task.next_run_in) : '');
    text(group, task.group || '');
    text(paused, pauseText(task.pause_reason));
    text(failure, task.last_failure || '');
    failure.title = task.last_failure || '';
  }
}
