// The live event stream read with fetch() (EventSource cannot send the bearer header): a
// parser of text/event-stream over a ReadableStream, and a reconnecting reader that resumes
// with Last-Event-ID after a drop (backoff 0.5 s doubling to 15 s, reset once events flow).

import { headers } from './api.js';

/**
 * Splits a text/event-stream into events: feed it decoded text, get `{event, data, id}`
 * objects (the HTML standard's parsing rules: fields per line, a blank line ends an event,
 * lines starting with ':' are comments, one leading space after the colon is dropped).
 */
/** Longest unfinished line kept (characters): beyond it the stream is dropped and resumed. */
const MAX_PENDING = 1 << 20;

export class SseParser {
  constructor() {
    this.buffer = '';
    this.reset();
  }

  reset() {
    this.event = '';
    this.data = [];
    this.id = null;
  }

  push(text) {
    this.buffer += text;
    const out = [];
    let start = 0;
    for (;;) {
      const newline = this.buffer.slice(start).search(/\r\n|\r|\n/);
      if (newline < 0) break;
      const end = start + newline;
      const line = this.buffer.slice(start, end);
      const width = this.buffer.startsWith('\r\n', end) ? 2 : 1;
      // A lone '\r' at the very end may be the first half of '\r\n': wait for more.
      if (width === 1 && this.buffer[end] === '\r' && end + 1 === this.buffer.length) break;
      start = end + width;
      if (line === '') {
        if (this.data.length > 0 || this.event) {
          out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
        }
        this.reset();
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
      else if (field === 'id' && !value.includes('\0')) this.id = value;
    }
    this.buffer = this.buffer.slice(start);
    if (this.buffer.length > MAX_PENDING) {
      throw new Error('an event line longer than 1 MiB');
    }
    return out;
  }
}

const MIN_DELAY = 500;
const MAX_DELAY = 15000;

/**
 * Reads `api/events` until stopped, calling `on.event(seqEvent)` for each event (its data
 * parsed), `on.marker(kind, detail)` for gap / restarted / lagged / closed / dropped,
 * and `on.state(text)` when the connection changes. Resumes after the last id seen.
 * Returns `{ stop(), lastId() }`.
 */
export function follow(on) {
  let lastId = null;
  let stopped = false;
  let controller = null;
  let delay = MIN_DELAY;
  let timer = null;
  // Each connection's number: a continuation of an older one (aborted by restart) ends.
  let generation = 0;

  async function connect() {
    if (stopped) return;
    const mine = ++generation;
    const current = () => mine === generation && !stopped;
    controller = new AbortController();
    const extra = { Accept: 'text/event-stream' };
    if (lastId) extra['Last-Event-ID'] = lastId;
    on.state(lastId ? 'reconnecting…' : 'connecting…');
    let response;
    try {
      response = await fetch('api/events', {
        headers: headers(extra),
        signal: controller.signal,
        cache: 'no-store',
      });
    } catch {
      if (!current()) return;
      return retry('the server did not answer');
    }
    if (!current()) return;
    if (response.status === 401) {
      on.state('the event stream needs a token');
      on.unauthorized?.();
      return; // Resumed by restart() once a token is entered.
    }
    if (!response.ok || !response.body) {
      return retry(`the event stream answered ${response.status}`);
    }
    on.state('live');
    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let ended = null;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || !current()) break;
        for (const item of parser.push(value)) {
          if (item.id) lastId = item.id;
          const result = dispatch(item);
          if (result === 'closed' || result === 'lagged') {
            ended = result;
          }
        }
        delay = MIN_DELAY;
      }
    } catch {
      // A network error (or an over-long line) ends the read like the end of the stream.
      reader.cancel().catch(() => {});
    }
    if (!current()) return;
    if (ended === 'closed') {
      on.state('the supervisor shut down');
      return;
    }
    if (ended !== 'lagged') {
      on.marker('dropped', {});
    }
    retry('the stream dropped');
  }

  function dispatch(item) {
    let data = null;
    try {
      data = item.data ? JSON.parse(item.data) : null;
    } catch {
      data = { raw: item.data };
    }
    // An epoch is a 64-bit number: JSON.parse would round it, so it is read as text.
    const epoch = item.data && /"epoch"\s*:\s*(\d+)/.exec(item.data);
    if (data && epoch) data.epoch = epoch[1];
    switch (item.event) {
      case 'message':
        on.event(data);
        return 'event';
      case 'gap':
      case 'restarted':
      case 'lagged':
        on.marker(item.event, data || {});
        return item.event;
      case 'closed':
        on.marker('closed', data || {});
        return 'closed';
      default:
        return 'ignored';
    }
  }

  function retry(reason) {
    if (stopped) return;
    on.state(reason ? `${reason}: retrying in ${Math.round(delay / 100) / 10} s` : 'reconnecting…');
    clearTimeout(timer);
    timer = setTimeout(connect, delay);
    delay = Math.min(delay * 2, MAX_DELAY);
  }

  connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
    },
    /** Reconnects now (a token was entered), resuming where it left off. */
    restart() {
      generation += 1;
      controller?.abort();
      clearTimeout(timer);
      delay = MIN_DELAY;
      stopped = false;
      connect();
    },
    lastId() {
      return lastId;
    },
  };
}
