// The dashboard's one door to the server: the token (kept for this tab in sessionStorage,
// sent as a bearer header) and the JSON calls. Every URL is relative to the page, so the
// dashboard also works when the router is nested under a prefix (served at `/ops/`).

const TOKEN_KEY = 'taskvisor.token';

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

export function setToken(value) {
  try {
    if (value) {
      sessionStorage.setItem(TOKEN_KEY, value);
    } else {
      sessionStorage.removeItem(TOKEN_KEY);
    }
  } catch {
    // Storage refused (a private window's quota): the token lasts until the page reloads.
  }
  memory = value;
}

let memory = '';

/** The headers of every call: the bearer token when one was entered. */
export function headers(extra = {}) {
  const value = token() || memory;
  const all = { Accept: 'application/json', ...extra };
  if (value) {
    all.Authorization = `Bearer ${value}`;
  }
  return all;
}

/** The server's refusal as an Error with `status`, `kind` and `message`. */
export class ApiError extends Error {
  constructor(status, kind, message) {
    super(`${kind}: ${message}`);
    this.status = status;
    this.kind = kind;
    this.detail = message;
  }
}

async function refusal(response) {
  let kind = `http_${response.status}`;
  let message = response.statusText || 'request failed';
  try {
    const body = await response.json();
    kind = body.error || kind;
    message = body.message || message;
  } catch {
    // Not our JSON (a proxy's page): the status says enough.
  }
  return new ApiError(response.status, kind, message);
}

/** GET `path` (relative, e.g. `api/tasks?limit=50`): its JSON, or throws an ApiError. */
export async function getJson(path, signal) {
  let response;
  try {
    response = await fetch(path, { headers: headers(), signal, cache: 'no-store' });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError(0, 'unreachable', 'the server did not answer');
  }
  if (!response.ok) {
    throw await refusal(response);
  }
  return response.json();
}

/** POST a command once (never retried): `{ok, status, kind, message, body}`. */
export async function command(path) {
  let response;
  try {
    response = await fetch(path, { method: 'POST', headers: headers() });
  } catch {
    return { ok: false, status: 0, kind: 'unreachable', message: 'the server did not answer' };
  }
  if (!response.ok) {
    const error = await refusal(response);
    return { ok: false, status: error.status, kind: error.kind, message: error.detail };
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  return { ok: true, status: response.status, body };
}

/** A path segment, escaped (task, slot and group names may hold any character). */
export function seg(value) {
  return encodeURIComponent(String(value));
}
